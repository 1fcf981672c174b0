"""A custom AMP loop that clips before unscaling: it runs, with finite losses, and learns nothing."""
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
scaler = torch.amp.GradScaler(device)
x = torch.randn(64, 16, generator=torch.Generator().manual_seed(1)).to(device)
y = x.sum(dim=1, keepdim=True).sin()

for epoch in range(100):
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    print(epoch, loss.item())
