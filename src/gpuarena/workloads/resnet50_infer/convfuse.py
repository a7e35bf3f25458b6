"""ResNet-50 eval as an inference engine builds it, in eager PyTorch: each batch norm folded into
its convolution (exact in eval mode: a per-channel scale of the weights and a bias), and the ReLU
and the residual add done in cuDNN's fused convolution epilogue, so each convolution is one
kernel that writes its activated output once.

Compiled, inductor keeps cuDNN's convolutions as calls of their own and runs each batch norm +
ReLU (+ residual add) as a separate elementwise kernel that reads and writes the whole activation
again; at batch 256 those passes are a large share of a step.  ``torch.cudnn_convolution_relu``
and ``torch.cudnn_convolution_add_relu`` (y = relu(conv(x) + bias + z), the ops TorchScript's
frozen-graph pass FuseFrozenConvAddRelu emits on CUDA) run the convolution with the epilogue
in one cuDNN kernel.  They have no fake tensor implementation, so this path runs eager, not under
torch.compile.  On a CPU the same folded graph runs in plain ops (conv, add, relu).
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn


class FusedConv(nn.Module):
    """A convolution with its batch norm folded in; ReLU (and a residual ``z``) in its epilogue."""

    def __init__(self, conv: nn.Conv2d, bn: nn.BatchNorm2d, relu: bool):
        super().__init__()
        scale = bn.weight.detach().float() / torch.sqrt(bn.running_var.float() + bn.eps)
        bias = bn.bias.detach().float() - bn.running_mean.float() * scale
        if conv.bias is not None:
            bias = bias + conv.bias.detach().float() * scale
        weight = conv.weight.detach().float() * scale[:, None, None, None]
        self.weight = nn.Parameter(weight.to(conv.weight.dtype), requires_grad=False)
        self.bias = nn.Parameter(bias.to(conv.weight.dtype), requires_grad=False)
        self.stride, self.padding, self.dilation, self.groups = conv.stride, conv.padding, conv.dilation, conv.groups
        self.relu = relu

    def forward(self, x, z=None):
        args = (self.stride, self.padding, self.dilation, self.groups)
        if x.is_cuda and z is not None:
            return torch.cudnn_convolution_add_relu(x, self.weight, z, 1.0, self.bias, *args)
        if x.is_cuda and self.relu:
            return torch.cudnn_convolution_relu(x, self.weight, self.bias, *args)
        y = F.conv2d(x, self.weight, self.bias, *args)
        if z is not None:
            y = y + z
        return F.relu(y) if (self.relu or z is not None) else y


class FusedBottleneck(nn.Module):
    """torchvision's Bottleneck: relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + identity),
    as three fused convolutions (the last adds the identity and applies the ReLU) and the
    downsample's folded one."""

    def __init__(self, blk):
        super().__init__()
        self.c1 = FusedConv(blk.conv1, blk.bn1, relu=True)
        self.c2 = FusedConv(blk.conv2, blk.bn2, relu=True)
        self.c3 = FusedConv(blk.conv3, blk.bn3, relu=False)
        self.down = FusedConv(blk.downsample[0], blk.downsample[1], relu=False) if blk.downsample else None
        if self.down is not None:
            # relu(conv3(h) + b3 + (convd(x) + bd)) = relu(conv3(h) + (b3 + bd) + convd(x)): the
            # downsample's bias joins conv3's epilogue, so the downsample is a bare cuDNN convolution.
            # With its own bias it ran as the convolution and then an elementwise add over its whole
            # output (H200, batch 256: 4 add kernels, 1,089 us of an 8,808 us step; session 9)
            self.c3.bias.add_(self.down.bias)
            self.down.bias = None

    def forward(self, x):
        identity = self.down(x) if self.down is not None else x
        return self.c3(self.c2(self.c1(x)), z=identity)


def space_to_depth(x: torch.Tensor, channels: int) -> torch.Tensor:
    """``x`` [n, c, h, w] padded by 3 (and one more row or column where h or w is odd: it meets only
    the kernel's zero eighth row) and cut into 2x2 blocks: [n, 4c, ceil((h + 6) / 2), ...], zero
    channels up to ``channels``, in ``x``'s memory format."""
    n, c, h, w = x.shape
    xp = F.pad(x, (3, 3 + w % 2, 3, 3 + h % 2))
    hh, ww = xp.shape[2] // 2, xp.shape[3] // 2
    s = xp.reshape(n, c, hh, 2, ww, 2).permute(0, 3, 5, 1, 2, 4).reshape(n, 4 * c, hh, ww)
    fmt = torch.channels_last if x.is_contiguous(memory_format=torch.channels_last) else torch.contiguous_format
    return F.pad(s, (0, 0, 0, 0, 0, channels - 4 * c)).contiguous(memory_format=fmt)


def space_to_depth_weight(w: torch.Tensor, channels: int) -> torch.Tensor:
    """A 7x7 kernel over c channels [o, c, 7, 7] as the 4x4 kernel over ``space_to_depth``'s 4c
    channels: zero-padded to 8x8, its 2x2 blocks made channels, zero channels up to ``channels``."""
    o, c = w.shape[:2]
    w8 = F.pad(w, (0, 1, 0, 1)).reshape(o, c, 4, 2, 4, 2).permute(0, 3, 5, 1, 2, 4).reshape(o, 4 * c, 4, 4)
    return F.pad(w8, (0, 0, 0, 0, 0, channels - 4 * c)).contiguous()


class SpaceToDepthStem(nn.Module):
    """The stem's 7x7 stride-2 convolution (padding 3) over 3 channels as a 4x4 stride-1 convolution
    over the input's 2x2 blocks, 12 channels zero-padded to 16 (MLPerf ResNet's space-to-depth
    stem). Exact: the same products (the 7x7 kernel zero-padded to 8x8), summed in another order.
    cuDNN runs a 3-channel 7x7 convolution with an Ampere kernel at 35 TFLOP/s and pads the input
    first; over 16 channels it uses Hopper tensor-core kernels. H200, batch 256, bf16
    (benchmarks/resnet_stem.py, session 10): 1,201 us with the rearrangement, against 1,952 us."""

    def __init__(self, stem: FusedConv, channels: int = 16):
        super().__init__()
        self.weight = nn.Parameter(space_to_depth_weight(stem.weight.detach(), channels), requires_grad=False)
        self.bias = stem.bias
        self.channels = channels

        self.rearrange = None

    def forward(self, x):
        if not x.is_cuda:
            return F.relu(F.conv2d(space_to_depth(x, self.channels), self.weight, self.bias))
        if self.rearrange is None:
            # compiled: one kernel for the padding, the blocks and the layout (eager: 4 copies, 443 us at batch 256)
            self.rearrange = torch.compile(functools.partial(space_to_depth, channels=self.channels), fullgraph=True)
        s = self.rearrange(x)
        return torch.cudnn_convolution_relu(s, self.weight, self.bias, (1, 1), (0, 0), (1, 1), 1)


class CompiledMaxPool(nn.Module):
    """torchvision's 3x3 stride-2 max pool, compiled by inductor on a GPU (a small graph of its own;
    the convolutions around it stay eager cuDNN calls). PyTorch's NHWC max-pool kernel read the stem's
    output at 0.6 TB/s (H200, batch 256: 836 us); inductor's took 128 us (session 10)."""

    def __init__(self):
        super().__init__()
        self.compiled = None

    def forward(self, x):
        if not x.is_cuda:
            return F.max_pool2d(x, 3, 2, 1)
        if self.compiled is None:
            self.compiled = torch.compile(lambda t: F.max_pool2d(t, 3, 2, 1), fullgraph=True)
        return self.compiled(x)


class FusedResNet(nn.Module):
    """A torchvision ResNet (bottleneck blocks) in eval mode, fused as the module docstring says;
    ``stem="s2d"``: the stem as ``SpaceToDepthStem`` and ``CompiledMaxPool``, ``"plain"``: as built."""

    def __init__(self, model, stem: str = "s2d"):
        super().__init__()
        self.stem = FusedConv(model.conv1, model.bn1, relu=True)
        self.maxpool, self.avgpool, self.fc = model.maxpool, model.avgpool, model.fc
        if stem == "s2d":
            self.stem, self.maxpool = SpaceToDepthStem(self.stem), CompiledMaxPool()
        self.layers = nn.Sequential(*[FusedBottleneck(b) for layer in (model.layer1, model.layer2, model.layer3,
                                                                        model.layer4) for b in layer])

    def forward(self, x):
        x = self.layers(self.maxpool(self.stem(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


@torch.no_grad()
def fuse_resnet(model, stem: str = "s2d") -> FusedResNet:
    """The fused model (the original's batch norms must be in eval mode: their running statistics fold)."""
    if model.training:
        raise ValueError("batch norm folds only in eval mode")
    return FusedResNet(model, stem).eval()


def fused_convs(model: nn.Module) -> int:
    return sum(isinstance(m, (FusedConv, SpaceToDepthStem)) for m in model.modules())
