#!/usr/bin/python3
"""Train the project's Fashion-MNIST encoders and export them to ONNX.

Two encoders share one small CNN backbone (128-d penultimate features):

  supervised  trained with cross-entropy on the 60,000 training images (the
              paper's supervised RepVGG-A2/CIFAR100 stands in here);
  simclr      trained self-supervised with SimCLR's NT-Xent loss on two
              augmented views per image (the paper's ResNet18-SimCLR/STL10),
              then a linear probe on its frozen features gives its logits.

Each ONNX file takes `image` (batch, 1, 28, 28) float32 = pixel/255 and returns
`features` (batch, 128) and `logits` (batch, 10). The script also writes, per
encoder, the features and logits PyTorch computed for the first 64 test images
(`<name>-reference.npz`), which the Go test compares with ONNX Runtime's.

Run with Debian's python3-torch (apt-get install python3-torch):
    /usr/bin/python3 encoders/train.py [--threads 2] [--out encoders]
Training is CPU-only; seeds are fixed (torch.manual_seed(SEED)), though
PyTorch's CPU kernels do not promise bit-identical results across machines.
"""

import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20261122
DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load(split):
    prefix = "train" if split == "train" else "t10k"
    x = read_idx(os.path.join(DATA, prefix + "-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(DATA, prefix + "-labels-idx1-ubyte.gz"))
    return torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1), torch.from_numpy(y.astype(np.int64))


class Encoder(nn.Module):
    def __init__(self, dim=128, classes=10):
        super().__init__()

        def block(i, o):
            return nn.Sequential(
                nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                nn.MaxPool2d(2))

        self.body = nn.Sequential(block(1, 32), block(32, 64))
        self.fc = nn.Linear(64 * 7 * 7, dim)
        self.classifier = nn.Linear(dim, classes)

    def features(self, x):
        return F.relu(self.fc(torch.flatten(self.body(x), 1)))

    def forward(self, x):
        h = self.features(x)
        return h, self.classifier(h)


def augment(x, strong):
    """Random crop after 2-pixel padding and horizontal flip; with strong,
    also a random resized crop (scale 0.5-1) and Gaussian noise (σ 0.05):
    SimCLR's views."""
    n = x.shape[0]
    if strong:
        scale = torch.empty(n).uniform_(0.5, 1.0)
        s = scale.sqrt()
        tx = (torch.rand(n) * 2 - 1) * (1 - s)
        ty = (torch.rand(n) * 2 - 1) * (1 - s)
        theta = torch.zeros(n, 2, 3)
        theta[:, 0, 0], theta[:, 1, 1] = s, s
        theta[:, 0, 2], theta[:, 1, 2] = tx, ty
        grid = F.affine_grid(theta, x.shape, align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
    else:
        padded = F.pad(x, (2, 2, 2, 2))
        i, j = np.random.randint(0, 5, size=2)
        x = padded[:, :, i:i + 28, j:j + 28]
    flip = torch.rand(n) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x)
    if strong:
        x = (x + 0.05 * torch.randn_like(x)).clamp(0, 1)
    return x


def accuracy(model, x, y):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), 1000):
            _, logits = model(x[i:i + 1000])
            correct += (logits.argmax(1) == y[i:i + 1000]).sum().item()
    return correct / len(x)


def train_supervised(xtr, ytr, xte, yte, epochs):
    model = Encoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr))
        t0 = time.time()
        for i in range(0, len(xtr), 128):
            idx = perm[i:i + 128]
            _, logits = model(augment(xtr[idx], False))
            loss = F.cross_entropy(logits, ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        print(f"supervised epoch {epoch + 1}/{epochs}: loss {loss.item():.4f}, test accuracy {accuracy(model, xte, yte):.4f} ({time.time() - t0:.0f} s)", flush=True)
    return model


def nt_xent(z1, z2, tau):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / tau
    n = z1.shape[0]
    sim.fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, target)


def train_simclr(xtr, ytr, xte, yte, epochs, per_epoch):
    model = Encoder()
    proj = nn.Sequential(nn.Linear(128, 128), nn.ReLU(inplace=True), nn.Linear(128, 64))
    params = list(model.body.parameters()) + list(model.fc.parameters()) + list(proj.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr))[:per_epoch]
        t0 = time.time()
        for i in range(0, per_epoch, 256):
            x = xtr[perm[i:i + 256]]
            z1 = proj(model.features(augment(x, True)))
            z2 = proj(model.features(augment(x, True)))
            loss = nt_xent(z1, z2, 0.5)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"simclr epoch {epoch + 1}/{epochs}: NT-Xent {loss.item():.4f} ({time.time() - t0:.0f} s)", flush=True)
    # Linear probe on the frozen features: the encoder's logits.
    model.eval()
    with torch.no_grad():
        feats = torch.cat([model.features(xtr[i:i + 1000]) for i in range(0, len(xtr), 1000)])
    opt = torch.optim.Adam(model.classifier.parameters(), lr=1e-2)
    for epoch in range(10):
        perm = torch.randperm(len(feats))
        for i in range(0, len(feats), 256):
            idx = perm[i:i + 256]
            loss = F.cross_entropy(model.classifier(feats[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    print(f"simclr linear probe: test accuracy {accuracy(model, xte, yte):.4f}", flush=True)
    return model


def export(model, name, xte, yte, out, info):
    model.eval()
    path = os.path.join(out, f"fmnist-{name}.onnx")
    torch.onnx.export(model, xte[:2], path, input_names=["image"], output_names=["features", "logits"],
                      dynamic_axes={"image": {0: "batch"}, "features": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13)
    with torch.no_grad():
        feats, logits = model(xte[:64])
    np.savez(os.path.join(out, f"fmnist-{name}-reference.npz"), index=np.arange(64, dtype=np.int64),
             features=feats.numpy().astype(np.float32), logits=logits.numpy().astype(np.float32))
    info[name] = {"onnx": os.path.basename(path), "test_accuracy": round(accuracy(model, xte, yte), 4),
                  "feature_dim": int(feats.shape[1])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--simclr-epochs", type=int, default=12)
    ap.add_argument("--simclr-per-epoch", type=int, default=30000)
    ap.add_argument("--only", choices=["supervised", "simclr"])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    xtr, ytr = load("train")
    xte, yte = load("test")
    info_path = os.path.join(args.out, "encoders.json")
    info = json.load(open(info_path)) if os.path.exists(info_path) else {}
    info["seed"] = SEED
    info["torch"] = torch.__version__
    if args.only in (None, "supervised"):
        torch.manual_seed(SEED)
        np.random.seed(SEED % 2**32)
        export(train_supervised(xtr, ytr, xte, yte, args.epochs), "supervised", xte, yte, args.out, info)
        info["supervised"]["epochs"] = args.epochs
    if args.only in (None, "simclr"):
        torch.manual_seed(SEED + 1)
        np.random.seed((SEED + 1) % 2**32)
        export(train_simclr(xtr, ytr, xte, yte, args.simclr_epochs, args.simclr_per_epoch), "simclr", xte, yte, args.out, info)
        info["simclr"].update(epochs=args.simclr_epochs, images_per_epoch=args.simclr_per_epoch,
                              logits="linear probe on frozen features, 10 epochs")
    with open(info_path, "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    print(json.dumps(info, indent=2))


if __name__ == "__main__":
    main()
