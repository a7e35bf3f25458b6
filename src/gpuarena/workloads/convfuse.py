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


class FusedResNet(nn.Module):
    """A torchvision ResNet (bottleneck blocks) in eval mode, fused as the module docstring says."""

    def __init__(self, model):
        super().__init__()
        self.stem = FusedConv(model.conv1, model.bn1, relu=True)
        self.maxpool, self.avgpool, self.fc = model.maxpool, model.avgpool, model.fc
        self.layers = nn.Sequential(*[FusedBottleneck(b) for layer in (model.layer1, model.layer2, model.layer3,
                                                                        model.layer4) for b in layer])

    def forward(self, x):
        x = self.layers(self.maxpool(self.stem(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


@torch.no_grad()
def fuse_resnet(model) -> FusedResNet:
    """The fused model (the original's batch norms must be in eval mode: their running statistics fold)."""
    if model.training:
        raise ValueError("batch norm folds only in eval mode")
    return FusedResNet(model).eval()


def fused_convs(model: nn.Module) -> int:
    return sum(isinstance(m, FusedConv) for m in model.modules())
