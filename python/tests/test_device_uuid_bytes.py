"""device_uuid_bytes: the 16 UUID bytes of a device object's `uuid` text (torch's properties,
numba-cuda's device), in the text forms torch has used (the H100's "GPU-…" form seen in docs/validation.md), zeros when there is none."""

from __future__ import annotations

from types import SimpleNamespace

from warpwatch.examples._common import device_uuid_bytes

H100 = "e50e82a4-8b48-f7a7-e80f-c746574c2134"


def test_the_gpu_prefixed_and_the_bare_forms_give_the_same_16_bytes() -> None:
    expected = bytes.fromhex(H100.replace("-", ""))
    assert len(expected) == 16
    assert device_uuid_bytes(SimpleNamespace(uuid=f"GPU-{H100}")) == expected
    assert device_uuid_bytes(SimpleNamespace(uuid=H100)) == expected


def test_no_uuid_or_an_unreadable_one_gives_zeros() -> None:
    assert device_uuid_bytes(SimpleNamespace()) == bytes(16)
    assert device_uuid_bytes(SimpleNamespace(uuid="not hex")) == bytes(16)
