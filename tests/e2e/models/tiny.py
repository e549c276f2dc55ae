"""Small models for the CLI and error tests (each builder returns (model, example_inputs))."""

import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class DataDependent(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:  # control flow on data: torch.export refuses it
            return x * 2
        return x


class Variants(nn.Module):
    """linear, mm with a [K, N] weight, addmm, and x @ w."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.lin = nn.Linear(64, 48)
        self.w_kn = nn.Parameter(torch.randn(48, 40, generator=g) * 0.1)
        self.w_add = nn.Parameter(torch.randn(40, 24, generator=g) * 0.1)
        self.b_add = nn.Parameter(torch.randn(24, generator=g))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        h = torch.mm(h, self.w_kn)
        return torch.addmm(self.b_add, h, self.w_add)


def build() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return Tiny().eval(), (torch.randn(8, 64),)


def single() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(1)
    return nn.Linear(64, 32).eval(), (torch.randn(8, 64),)


class MatmulKN(nn.Module):
    """x @ w with w stored [K, N]: block recipes quantize it down its columns."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(64, 40, generator=torch.Generator().manual_seed(5)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w


def matmul_kn() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(2)
    return MatmulKN().eval(), (torch.randn(8, 64),)


class Embedding(nn.Module):
    """Token ids in (int64 inputs), a linear out."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.out = nn.Linear(32, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(ids))


def embedding() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(4)
    return Embedding().eval(), (torch.randint(0, 100, (2, 5)),)


def rejected() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return DataDependent(), (torch.randn(4, 4),)


def empty() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return Tiny().eval(), (torch.randn(0, 64),)


def not_a_model() -> tuple[object, tuple[torch.Tensor, ...]]:
    return "model", (torch.randn(2, 2),)


def variants() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return Variants().eval(), (torch.randn(16, 64),)


class Outlier(nn.Module):
    """fc1 well-behaved, but its output channel 0 carries a huge bias that fc2 ignores (zero
    weights): a per-tensor FP8 scale for fc2's input then flushes every other channel to zero,
    the weak layer ``qmlir report --suggest`` should name."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 32)
        with torch.no_grad():
            self.fc1.bias[0] = 1.0e6
            self.fc2.weight[:, 0] = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def outlier() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(6)
    return Outlier().eval(), (torch.randn(16, 64),)


class WeightsInLists(nn.Module):
    """A weight in ``einsum`` and in ``cat``: torch-mlir's importer refused both as is."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Parameter(torch.randn(32, 64) / 8)
        self.prefix = nn.Parameter(torch.randn(4, 32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.einsum("bk,nk->bn", x, self.proj)
        return torch.cat([self.prefix, y], dim=0)


def weights_in_lists() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(7)
    return WeightsInLists().eval(), (torch.randn(16, 64),)


class Tagger(nn.Module):
    """Token ids and a mask: ids index an embedding of 50 rows (a range the artifact checks)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.embed = nn.Embedding(50, 32)
        self.head = nn.Linear(32, 8)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        h = self.embed(input_ids) * attention_mask.unsqueeze(-1).float()
        return self.head(h)


def tagger() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    ids = torch.arange(24).reshape(2, 12) % 50
    mask = (torch.arange(24).reshape(2, 12) % 5 != 0).to(torch.int64)
    return Tagger().eval(), (ids, mask)


class Bf16(nn.Module):
    """A bfloat16 model taking bfloat16 inputs."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(6)
        self.fc = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def bf16() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return Bf16().to(torch.bfloat16).eval(), (torch.randn(8, 64).to(torch.bfloat16),)


class WithModelOutput(nn.Module):
    """Returns a transformers ``ModelOutput``, as Hugging Face models do."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(7)
        self.fc = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> object:
        from transformers.modeling_outputs import BaseModelOutput

        return BaseModelOutput(last_hidden_state=self.fc(x))


def model_output() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    # imported before the export traces forward: the import registers ModelOutput's pytree
    import transformers.modeling_outputs  # noqa: F401

    torch.manual_seed(8)
    return WithModelOutput().eval(), (torch.randn(8, 64),)


def tagger_dynamic() -> tuple[nn.Module, tuple[torch.Tensor, ...], object]:
    """The tagger with a dynamic batch and sequence length (shared by both inputs)."""
    model, inputs = tagger()
    batch = torch.export.Dim("batch", min=1, max=16)
    seq = torch.export.Dim("seq", min=2, max=64)
    return model, inputs, {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}


class TinyRegression(nn.Module):
    """Tiny under an MSE loss: ``forward(x, y)`` returns the loss (``qmlir compile --train``)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = Tiny()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.mse_loss(self.net(x), y)


def build_train() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return TinyRegression(), (torch.randn(8, 64), torch.randn(8, 16))
