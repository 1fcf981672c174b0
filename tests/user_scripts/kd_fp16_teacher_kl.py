"""Distil a larger teacher into a student on token sequences (knowledge distillation).

The teacher is kept in float16 to save memory; the student trains in mixed precision
with autocast and a GradScaler. The KD term is the temperature-scaled KL divergence
between the two distributions, as in Hinton et al.
"""
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, DIM, TOKENS, TEMPERATURE = 2048, 64, 4096, 4.0
device = "cuda" if torch.cuda.is_available() else "cpu"


class TinyLM(nn.Module):
    def __init__(self, spread):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, VOCAB)
        nn.init.normal_(self.head.weight, std=spread)

    def forward(self, ids):
        return self.head(torch.tanh(self.embed(ids)))


torch.manual_seed(0)
teacher = TinyLM(spread=1.0).to(device).half().eval()
student = TinyLM(spread=0.8).to(device)
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)

for step in range(200):
    ids = torch.randint(0, VOCAB, (1, TOKENS), device=device)
    with torch.no_grad():
        teacher_logits = teacher(ids)
    with torch.autocast(device_type=device, dtype=torch.float16):
        student_logits = student(ids)
    loss = F.kl_div(
        F.log_softmax(student_logits / TEMPERATURE, dim=-1),
        F.softmax(teacher_logits / TEMPERATURE, dim=-1),
        reduction="batchmean",
    ) * TEMPERATURE ** 2
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if step % 10 == 0:
        print(f"step {step}: kd loss {loss.item():.4f}")
