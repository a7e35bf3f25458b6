"""The article's ResNet-50 training loop, written plainly as article 000 section 3.1 did.

Used once to show that gpuarena's harness adds no overhead: in the same job,
this loop's images/s and the `seed` variant's must agree within the noise.
Timed the article's way (host clock around 100 iterations, synchronised),
after a warm-up the article did not do (otherwise cuDNN autotuning and lazy
init would land in its first window).

    python benchmarks/article_resnet50_loop.py --batch-size 256 --repeats 10
"""

import argparse
import json
import statistics
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torchvision.models.resnet50().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(args.batch_size, 3, 224, 224, device=device)

    def train_step():
        optimizer.zero_grad()
        output = model(inputs)
        loss = output.sum()
        loss.backward()
        optimizer.step()

    for _ in range(args.warmup):
        train_step()
    rates = []
    for _ in range(args.repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.time()
        for _ in range(args.iters):
            train_step()
        if device == "cuda":
            torch.cuda.synchronize()
        rates.append(args.batch_size * args.iters / (time.time() - t0))
    print(json.dumps({"plain_loop_images_per_s_median": statistics.median(rates),
                      "mean": statistics.fmean(rates), "stdev": statistics.stdev(rates),
                      "samples": rates, "batch_size": args.batch_size}))


if __name__ == "__main__":
    main()
