"""Fine-tune LoRA adapters on a small causal LM with mixed precision.

The model (base and adapters) is cast to float16 to fit a 16 GB GPU, and the loop uses
autocast and a GradScaler, as the PyTorch AMP recipe shows. (A 2-layer GPT-2 is built
here so that nothing is downloaded.)
"""
import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)

config = GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=128, bos_token_id=0, eos_token_id=0)
base = GPT2LMHeadModel(config)
lora = LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn"], fan_in_fan_out=True, task_type="CAUSAL_LM")
model = get_peft_model(base, lora)
model.half()
model.to(device)
model.print_trainable_parameters()

optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
scaler = torch.amp.GradScaler(device)

tokens = torch.randint(0, config.vocab_size, (64, 32), generator=torch.Generator().manual_seed(0))

for epoch in range(10):
    for start in range(0, len(tokens), 8):
        ids = tokens[start:start + 8].to(device)
        with torch.autocast(device_type=device, dtype=torch.float16):
            loss = model(input_ids=ids, labels=ids).loss
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
