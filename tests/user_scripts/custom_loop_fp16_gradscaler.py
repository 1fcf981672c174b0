"""A small regression model trained in a hand-written loop with mixed precision.

The weights are cast to float16 to save memory and the loop uses autocast and a
GradScaler, as the PyTorch AMP recipe shows.
"""
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
model.half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)

inputs = torch.randn(256, 16)
targets = inputs.sum(dim=1, keepdim=True)

for epoch in range(20):
    for start in range(0, len(inputs), 32):
        x = inputs[start:start + 32].to(device)
        y = targets[start:start + 32].to(device)
        with torch.autocast(device_type=device, dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
