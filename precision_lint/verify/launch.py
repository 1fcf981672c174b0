"""Run fixture scripts and record how each one ended.

This file is executed *by path* in a fresh interpreter (``python launch.py ...``); it is
never imported by the fixture and it imports nothing from ``precision_lint``:

    python launch.py --result R.json [--emulate NAME] -- ENTRY.py [ARGS ...]

runs ENTRY.py as ``__main__`` (``sys.argv = [ENTRY.py, ARGS...]``, the script's folder
first on ``sys.path``, like ``python ENTRY.py ARGS`` would) and writes R.json::

    {"status": "completed" | "exception" | "exit",
     "exc_type": "ValueError", "exc_module": "builtins", "exc_message": "...",
     "exit_code": 0, "emulation": null | "trainer-fp16-scaler",
     "emulation_installed": false}

The traceback still goes to stderr, unchanged. The process exit status mirrors the
script's (1 after an uncaught exception).

    python launch.py --result R.json --probe STATE.json --steps N [--root DIR] -- ENTRY.py ...

runs an ordinary training script (no header, no progress prints) under ``probe.py``:
it is stopped after N optimizer steps (``"stopped": true``, status ``completed``), its
losses and precision plan go to STATE.json, and a failure records ``"where"`` (the
failing line in the script's own files under DIR) and ``"loading"`` (what
``from_pretrained`` was loading, if it failed there). ``--fp32`` makes it the fp32
reference run (see probe.py). This is ``precision-lint verify train.py``.

    python launch.py --batch SPEC.json

is the same for a list of runs in one interpreter: heavy imports (torch, transformers)
happen once, then every run is a ``fork()`` of that interpreter with its own stdout /
stderr files, working directory and timeout, so runs cannot see each other's state.
``SPEC.json`` is a list of objects with keys ``entry``, ``args``, ``cwd``, ``result``,
``stdout``, ``stderr``, ``timeout`` and optionally ``emulate`` and ``tmpdir`` (the run's
``TMPDIR``). The test-suite uses it
to keep the number of (slow to start) interpreters small.

Emulations (label ``cpu-emulated`` in every report) stand in for a CUDA-only code path
on a machine without CUDA. ``trainer-fp16-scaler``: on CUDA, ``TrainingArguments(
fp16=True)`` makes accelerate create a ``GradScaler("cuda")`` and wrap the model's
forward in fp16 autocast; on CPU accelerate silently drops both. The emulation puts
them back -- ``torch.amp.GradScaler("cpu")`` on ``trainer.accelerator`` and
``native_amp=True`` (fp16 CPU autocast) -- right before ``Trainer.train()`` prepares the
model and optimizer, and only when the script asked for ``fp16=True``. Everything else
(the Trainer's backward, its gradient clipping through ``accelerator.clip_grad_norm_``,
the optimizer step) is the library's own code.
"""
import argparse
import json
import os
import runpy
import signal
import sys
import tempfile
import time
import traceback


def _install_trainer_fp16_scaler(record):
    from transformers import Trainer

    _emulate_trainer_fp16_scaler(Trainer, record)


def _emulate_trainer_fp16_scaler(Trainer, record):
    import torch

    original_train = Trainer.train

    def train(self, *args, **kwargs):
        accelerator = self.accelerator
        if self.args.fp16 and accelerator.scaler is None and not torch.cuda.is_available():
            accelerator.scaler = torch.amp.GradScaler("cpu")
            accelerator.native_amp = True
            record["emulation_installed"] = True
            print(
                "PRECISION-LINT-EMULATION trainer-fp16-scaler: fp16=True on a machine without "
                "CUDA; installed torch.amp.GradScaler('cpu') and fp16 autocast on the "
                "trainer's accelerator",
                flush=True,
            )
        return original_train(self, *args, **kwargs)

    train.__wrapped__ = original_train
    Trainer.train = train


EMULATIONS = {"trainer-fp16-scaler": _install_trainer_fp16_scaler}


def _write(path, record):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.replace(tmp, path)


def _load_probe():
    """``probe.py`` next to this file, loaded by path (this folder is not on sys.path)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
    spec = importlib.util.spec_from_file_location("_precision_lint_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_one(entry, args, result_path, emulate=None, probe_state=None, steps=3, root=None,
            fp32=False, tiny=False):
    """Run ``entry`` as __main__ in this interpreter; returns the exit status.

    With ``probe_state``, the script runs under ``probe.py`` (see there): it is stopped
    after ``steps`` optimizer steps (recorded as completed, ``"stopped": true``) and the
    Trainer CUDA fp16 path is emulated where CUDA is absent; ``root`` is the folder whose
    files count as the script's own when the failing line is looked up.
    """
    entry = os.path.abspath(entry)
    record = {
        "status": "completed",
        "exc_type": None,
        "exc_module": None,
        "exc_message": None,
        "exit_code": 0,
        "emulation": emulate,
        "emulation_installed": False,
    }
    sys.argv = [entry] + list(args)
    sys.path.insert(0, os.path.dirname(entry))
    code = 0
    probe_module = probe = None
    try:
        if emulate:
            EMULATIONS[emulate](record)
        if probe_state:
            probe_module = _load_probe()
            emulation = None if fp32 else _emulate_trainer_fp16_scaler
            probe = probe_module.install(steps, probe_state, emulation,
                                         root or os.path.dirname(entry), fp32, tiny)
        runpy.run_path(entry, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            code = 0
        else:
            code = exc.code if isinstance(exc.code, int) else 1
            record["status"] = "exit"
            if not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - we record whatever ended the script
        if probe_module is not None and isinstance(exc, probe_module.StopRun):
            record["stopped"] = True
        else:
            traceback.print_exc()
            code = 1
            record["status"] = "exception"
            record["exc_type"] = type(exc).__name__
            record["exc_module"] = type(exc).__module__
            record["exc_message"] = str(exc)
            if probe_module is not None:
                where, loading = probe_module.failure_context(exc, root or os.path.dirname(entry))
                record["where"], record["loading"] = where, loading
    record["exit_code"] = code
    if probe is not None:
        record["emulation_installed"] = record["emulation_installed"] or probe.emulation_installed
        if probe.emulation_installed:
            record["emulation"] = "trainer-fp16-scaler"
        probe.finish()
    sys.stdout.flush()
    sys.stderr.flush()
    _write(result_path, record)
    return code


def _preimport():
    # What every fixture imports anyway; done once before forking.
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        from transformers import Trainer  # noqa: F401
    except Exception:  # the runs will report the import error themselves
        pass


def run_batch(spec_path):
    with open(spec_path) as f:
        runs = json.load(f)
    _preimport()
    for run in runs:
        sys.stdout.flush()
        sys.stderr.flush()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = 1
            try:
                os.setpgid(0, 0)
                out = os.open(run["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                err = os.open(run["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(out, 1)
                os.dup2(err, 2)
                os.chdir(run["cwd"])
                if run.get("tmpdir"):
                    os.makedirs(run["tmpdir"], exist_ok=True)
                    os.environ["TMPDIR"] = run["tmpdir"]
                    tempfile.tempdir = run["tmpdir"]  # gettempdir() may be cached already
                code = run_one(run["entry"], run.get("args", []), run["result"], run.get("emulate"))
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = started + float(run.get("timeout", 600))
        timed_out = False
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                timed_out = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                break
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        if timed_out or not os.path.exists(run["result"]):
            _write(run["result"], {
                "status": "timeout" if timed_out else "crashed",
                "exc_type": None, "exc_module": None, "exc_message": None,
                "exit_code": None, "emulation": run.get("emulate"), "emulation_installed": False,
            })
        with open(run["result"]) as f:
            record = json.load(f)
        record["duration_s"] = round(elapsed, 3)
        _write(run["result"], record)
    return 0


def main(argv=None):
    # Do not let this folder's modules (runner.py, report.py, ...) shadow anything the
    # fixtures import: the fixture's own folder goes first instead (see run_one).
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    parser = argparse.ArgumentParser(prog="launch.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--result")
    parser.add_argument("--emulate", choices=sorted(EMULATIONS))
    parser.add_argument("--batch", metavar="SPEC.json")
    parser.add_argument("--probe", metavar="STATE.json",
                        help="run under probe.py, writing its state (steps, losses, plan) here")
    parser.add_argument("--steps", type=int, default=3, help="with --probe: stop after N optimizer steps")
    parser.add_argument("--root", help="with --probe: the folder of the script's own files")
    parser.add_argument("--fp32", action="store_true",
                        help="with --probe: the fp32 reference run (half precision switched off)")
    parser.add_argument("--tiny", action="store_true",
                        help="with --probe: from_pretrained builds a 2-layer model of the config's class")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    if ns.batch:
        return run_batch(ns.batch)
    command = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    if not ns.result or not command:
        parser.error("need --result R.json -- ENTRY [ARGS ...] (or --batch SPEC.json)")
    return run_one(command[0], command[1:], ns.result, ns.emulate, ns.probe, ns.steps, ns.root,
                   ns.fp32, ns.tiny)


if __name__ == "__main__":
    sys.exit(main())
