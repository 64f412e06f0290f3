"""The protocol buffer wire format, read by hand: enough for a SentencePiece ``.model`` file.

A message is a run of fields; each starts with a varint (7 bits a byte, low bits first, the
high bit set on every byte but the last) that packs the field's number and its wire type:
0 a varint, 1 eight bytes, 2 a length (a varint) and that many bytes (text, bytes or a message
of its own), 5 four bytes. A field may repeat (a list) and the fields may come in any order.
No schema is needed to walk a message, only to say what its fields mean.
"""

from __future__ import annotations

from collections.abc import Iterator


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("cut off inside a number")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
        if shift > 63:
            raise ValueError("a number longer than ten bytes")


def read_fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """``(field number, value)`` for each field of one protocol buffer message: an ``int``
    for varints and fixed 32/64-bit fields (their raw bits), ``bytes`` for the rest.

    >>> list(read_fields(bytes([0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69])))
    [(1, 150), (2, b'hi')]
    """
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 1:
            value, position = int.from_bytes(data[position : position + 8], "little"), position + 8
        elif wire == 2:
            length, position = _varint(data, position)
            value, position = data[position : position + length], position + length
        elif wire == 5:
            value, position = int.from_bytes(data[position : position + 4], "little"), position + 4
        else:
            raise ValueError(f"field {number} has wire type {wire}, which protobuf does not use")
        if position > len(data):
            raise ValueError(f"field {number} runs past the end of its message")
        yield number, value
