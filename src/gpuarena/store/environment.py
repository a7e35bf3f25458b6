"""The environment fingerprint (measure/env.py writes it), typed: what the report's
Environments table and a bundle's reader rely on.  Import refuses a bundle whose
fingerprint says ``"gpus": "H200"`` or ``"libraries": ["torch"]``; a stored one that
fails (edited by hand) is read as unknown, never an error for the whole report."""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuarena.store.checks import MAX_DEPTH_EXTRA, MAX_FINGERPRINT_CHARS, valid_bounded, valid_name

Name = Optional[str]


class Gpu(BaseModel):
    """One GPU as NVML describes it (measure/env.py _gpus); newer keys pass."""

    model_config = ConfigDict(extra="allow", strict=True)
    index: Optional[int] = Field(None, ge=0, le=1_000_000)
    name: Name = Field(None, max_length=200)
    uuid: Name = Field(None, max_length=200)
    memory_bytes: Optional[int] = Field(None, ge=0, le=1 << 60)
    nvlink_links_active: Optional[int] = Field(None, ge=0, le=1000)
    nvlink_gbs_per_direction: Optional[float] = Field(None, ge=0, le=1e9)

    _names = field_validator("name", "uuid")(valid_name)


class CudaDevice(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    name: Name = Field(None, max_length=200)
    capability: Name = Field(None, max_length=20)
    memory_bytes: Optional[int] = Field(None, ge=0, le=1 << 60)
    sm_count: Optional[int] = Field(None, ge=0, le=1_000_000)

    _names = field_validator("name", "capability")(valid_name)


class Fingerprint(BaseModel):
    """The fields readers use are typed (strictly); the rest is bounded in size and depth
    (``topology``, nvidia-smi's own table, is kept as it came, escapes included: no command prints it)."""

    model_config = ConfigDict(extra="allow", strict=True)
    hostname: Name = Field(None, max_length=300)
    os: Name = Field(None, max_length=300)
    python: Name = Field(None, max_length=50)
    cpu: Name = Field(None, max_length=300)
    cpu_count: Optional[int] = Field(None, ge=0, le=1_000_000)
    libraries: Optional[dict[str, Optional[str]]] = Field(None, max_length=200)
    torch_cuda: Name = Field(None, max_length=50)
    cudnn: Optional[Union[int, str]] = None
    cuda_available: Optional[bool] = None
    torch_threads: Optional[int] = Field(None, ge=0, le=1_000_000)
    cuda_devices: Optional[list[CudaDevice]] = Field(None, max_length=100_000)
    gpus: Optional[list[Gpu]] = Field(None, max_length=100_000)
    gpu_count: Optional[int] = Field(None, ge=0, le=100_000)
    gpu_name: Name = Field(None, max_length=200)
    driver: Name = Field(None, max_length=100)
    collected_at: Name = Field(None, max_length=40)

    _names = field_validator("hostname", "os", "python", "cpu", "torch_cuda", "gpu_name", "driver",
                             "collected_at")(valid_name)

    @field_validator("libraries")
    @classmethod
    def _libraries(cls, v):
        for k, x in (v or {}).items():
            valid_name(k)
            if x is not None and len(x) > 200:
                raise ValueError(f"libraries.{k} is longer than 200 characters")
            valid_name(x)
        return v

    @field_validator("cudnn")
    @classmethod
    def _cudnn(cls, v):
        return valid_name(v) if isinstance(v, str) else v


def fingerprint_ok(fp: Any) -> dict:
    """An environment fingerprint: a typed mapping, bounded in size and depth (ValueError if not)."""
    if not isinstance(fp, dict):
        raise ValueError("fingerprint is not a mapping")
    valid_bounded(fp, "fingerprint", MAX_FINGERPRINT_CHARS, MAX_DEPTH_EXTRA)
    Fingerprint.model_validate(fp)
    return fp
