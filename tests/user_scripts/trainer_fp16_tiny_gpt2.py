"""Fine-tune a small causal LM with the Hugging Face Trainer in fp16.

The model is cast to half precision to fit in memory, and `fp16=True` turns on mixed
precision training. (A 2-layer GPT-2 is built here so that nothing is downloaded.)
"""
import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class RandomTokens(Dataset):
    def __init__(self, n, length, vocab):
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, length), generator=generator)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


config = GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=128)
model = GPT2LMHeadModel(config)
model.half()

args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=4,
    num_train_epochs=3,
    learning_rate=5e-4,
    fp16=True,
    save_steps=10,
    logging_steps=5,
    report_to="tensorboard",
)
trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(64, 32, 128))
trainer.train()
trainer.save_model("out/final")
