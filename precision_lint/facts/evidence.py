"""Text that makes a file worth parsing beyond the rules' own evidence (plain data: the CLI
reads it before it knows whether anything needs parsing at all)."""

# Text that a file whose facts other files read may hold, beyond the rules' own evidence:
# a config file loaded by a helper (``load_settings()`` returns ``yaml.safe_load(...)``), a
# class derived from TrainingArguments, GradScaler or Accelerator (its calls elsewhere are those).
SUMMARY_EVIDENCE = (
    r"\byaml\b", r"\bjson\b", r"\btoml", r"OmegaConf",
    r"\bclass\s+\w+\([^)]*(?:Arguments|GradScaler|Accelerator|Config)\b",
)
