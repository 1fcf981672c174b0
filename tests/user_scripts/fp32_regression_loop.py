"""A plain float32 training loop: nothing here for precision-lint to fix."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--lr", type=float, default=1e-2)
args = parser.parse_args()

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
x = torch.randn(128, 8)
y = x[:, :1] * 2.0 - x[:, 1:2]

for epoch in range(args.epochs):
    for i in range(0, 128, 16):
        loss = nn.functional.mse_loss(model(x[i:i + 16]), y[i:i + 16])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: {loss.item():.4f}")
