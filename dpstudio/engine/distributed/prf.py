"""The mask PRFs of secure aggregation: ChaCha20 in numpy, SHAKE-128, AES-256-CTR.

The PRF expands the **full** 256-bit seed with a real cryptographic function, with a
domain-separation label per use (pair masks, self masks): ChaCha20 (RFC 8439; the
default) implemented here in numpy, vectorized over many keys — 20 rounds of 32-bit
add/rotate/xor on arrays of key lanes, processed in chunks to bound memory — or, on a
slow path kept for cross-checking, SHAKE-128 (``hashlib``) or AES-256-CTR
(``cryptography``), one call per seed. Masks are 64-bit words (little-endian keystream
bytes) reduced modulo 2^b by :mod:`~dpstudio.engine.distributed.secagg`, which is exact
since 2^b divides 2^64.
"""

from __future__ import annotations

import hashlib

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from dpstudio.engine.errors import ParameterError

__all__ = [
    "DEFAULT_PRF",
    "PRFS",
    "chacha20_blocks",
    "chacha20_encrypt",
    "expand_seed",
]

PRFS = ("chacha20", "shake128", "aes256ctr")
DEFAULT_PRF = "chacha20"

_PAIR_LABEL = b"dpstudio/secagg/pair-mask/v1"
_SELF_LABEL = b"dpstudio/secagg/self-mask/v1"

# --------------------------------------------------------------------------- ChaCha20

_CONSTANTS = np.array([0x61707865, 0x3320646E, 0x79622D32, 0x6B206574], dtype=np.uint32)
# Key lanes per pass of the round function: 16 state rows of 8192 uint32 (512 KiB) stay in
# cache, and each numpy call covers 4 × 8192 words, so call overhead stays small.
_LANES = 8192


def _nonce_words(nonce) -> np.ndarray:
    """A 96-bit nonce as 3 little-endian uint32 words: (3,) or, per lane, (3, L)."""
    if isinstance(nonce, (bytes, bytearray)):
        if len(nonce) != 12:
            raise ParameterError("a ChaCha20 nonce is 12 bytes (96 bits)")
        return np.frombuffer(bytes(nonce), dtype="<u4").astype(np.uint32)
    return np.asarray(nonce, dtype=np.uint32)


def _label_nonce(label: bytes) -> np.ndarray:
    return _nonce_words(hashlib.sha256(label).digest()[:12])


def _rotl(v: np.ndarray, r: int, tmp: np.ndarray) -> None:
    np.left_shift(v, r, out=tmp)
    np.right_shift(v, 32 - r, out=v)
    np.bitwise_or(v, tmp, out=v)


def _shifted(f, x: np.ndarray, y: np.ndarray) -> None:
    """x[m] ⊕= y[(m + 1) mod 4] for (4, L) blocks of rows (the diagonal round's pairing)."""
    f(x[0:3], y[1:4], out=x[0:3])
    f(x[3], y[0], out=x[3])


def _chacha_rounds(state: np.ndarray) -> None:
    """The 20 rounds of ChaCha20, in place, on a (16, L) uint32 state (one lane per column).

    Rows 0–3, 4–7, 8–11 and 12–15 hold the words a, b, c, d of the four column quarter
    rounds, which therefore run as one vectorized quarter round on (4, L) blocks. The
    diagonal round pairs a[m] with b[m+1], c[m+2], d[m+3]: each of its two-operand steps
    pairs rows shifted by one (mod 4), done as two slices — no copies.
    """
    a, b, c, d = state[0:4], state[4:8], state[8:12], state[12:16]
    tmp = np.empty_like(a)
    add, xor = np.add, np.bitwise_xor
    for _ in range(10):
        add(a, b, out=a)
        xor(d, a, out=d)
        _rotl(d, 16, tmp)
        add(c, d, out=c)
        xor(b, c, out=b)
        _rotl(b, 12, tmp)
        add(a, b, out=a)
        xor(d, a, out=d)
        _rotl(d, 8, tmp)
        add(c, d, out=c)
        xor(b, c, out=b)
        _rotl(b, 7, tmp)
        # Diagonal round: (a0, b1, c2, d3), (a1, b2, c3, d0), ... every operand pair is
        # (x[m], y[m + 1]): a += b, d ^= a (d3 with a0), c += d (c2 with d3), b ^= c.
        _shifted(add, a, b)
        _shifted(xor, d, a)
        _rotl(d, 16, tmp)
        _shifted(add, c, d)
        _shifted(xor, b, c)
        _rotl(b, 12, tmp)
        _shifted(add, a, b)
        _shifted(xor, d, a)
        _rotl(d, 8, tmp)
        _shifted(add, c, d)
        _shifted(xor, b, c)
        _rotl(b, 7, tmp)


def _blocks_t(keys_t: np.ndarray, counters: np.ndarray, nonce: np.ndarray) -> np.ndarray:
    """ChaCha20 blocks as a (16, L) uint32 array: keys (8, L) or (8, 1), counters (L,),
    nonce (3,) or (3, L). Lanes are processed :data:`_LANES` at a time."""
    lanes = counters.shape[0]
    out = np.empty((16, lanes), dtype=np.uint32)
    nonce = nonce.reshape(3, -1)
    for s in range(0, lanes, _LANES):
        e = min(s + _LANES, lanes)
        init = np.empty((16, e - s), dtype=np.uint32)
        init[0:4] = _CONSTANTS[:, None]
        init[4:12] = keys_t[:, s:e] if keys_t.shape[1] > 1 else keys_t
        init[12] = counters[s:e]
        init[13:16] = nonce[:, s:e] if nonce.shape[1] > 1 else nonce
        state = init.copy()
        _chacha_rounds(state)
        np.add(state, init, out=out[:, s:e])  # uint32 arithmetic wraps modulo 2^32
    return out


def _key_words(keys) -> np.ndarray:
    """256-bit keys as (L, 8) uint32 words: from 32-byte strings, (L, 32) uint8 rows or
    (L, 8) words (little-endian, as RFC 8439 reads the key)."""
    if isinstance(keys, (bytes, bytearray)):
        keys = np.frombuffer(bytes(keys), dtype=np.uint8).reshape(1, -1)
    k = np.asarray(keys)
    if k.ndim == 1:
        k = k.reshape(1, -1)
    if k.dtype == np.uint8 and k.shape[1] == 32:
        return np.ascontiguousarray(k).view("<u4").astype(np.uint32)
    if k.dtype == np.uint32 and k.shape[1] == 8:
        return k
    raise ParameterError("ChaCha20 keys are 32 bytes (256 bits) each")


def chacha20_blocks(keys, counters, nonce) -> np.ndarray:
    """The ChaCha20 block function (RFC 8439 §2.3) for many keys at once.

    Parameters
    ----------
    keys : bytes or numpy.ndarray
        One 32-byte key or L of them ((L, 32) uint8 or (L, 8) uint32 words).
    counters : int or numpy.ndarray
        Block counters (scalar or (L,), 32 bits).
    nonce : bytes or numpy.ndarray
        12 bytes, or (3,)/(L, 3) uint32 words.

    Returns
    -------
    numpy.ndarray
        (L, 16) uint32: the serialized block of lane ℓ is
        ``out[ℓ].astype('<u4').tobytes()``.

    Raises
    ------
    ParameterError
        For keys that are not 32 bytes, counters outside 32 bits or a bad nonce.
    """
    k = _key_words(keys)
    ctr = np.asarray(counters)
    if np.any(ctr < 0) or np.any(ctr > 0xFFFFFFFF):
        raise ParameterError("ChaCha20 block counters are 32-bit")
    nw = _nonce_words(nonce)
    lanes = max(k.shape[0], ctr.size, nw.shape[0] if nw.ndim == 2 else 1)
    ctr = np.broadcast_to(ctr.astype(np.uint32), (lanes,))
    keys_t = np.ascontiguousarray(k.T) if k.shape[0] == lanes else k[0].reshape(8, 1)
    nonce_t = np.ascontiguousarray(nw.T) if nw.ndim == 2 else nw
    return _blocks_t(keys_t, ctr, nonce_t).T


def chacha20_encrypt(key: bytes, counter: int, nonce: bytes, data: bytes) -> bytes:
    """ChaCha20 encryption (RFC 8439 §2.4): ``data`` XOR the keystream.

    Parameters
    ----------
    key : bytes
        32 bytes.
    counter : int
        The first block's counter.
    nonce : bytes
        12 bytes.
    data : bytes
        The plaintext (or ciphertext: the operation is its own inverse).

    Returns
    -------
    bytes
        ``data`` XOR the keystream from block ``counter`` on.

    Raises
    ------
    ParameterError
        If the block counter would pass 2^32, or the key or nonce has the wrong length.
    """
    blocks = -(-len(data) // 64)
    if counter < 0 or counter + blocks > 1 << 32:
        raise ParameterError("the ChaCha20 block counter would pass 2^32")
    stream = chacha20_blocks(key, np.arange(counter, counter + blocks, dtype=np.int64), nonce)
    ks = np.frombuffer(stream.astype("<u4").tobytes()[: len(data)], dtype=np.uint8)
    return (np.frombuffer(bytes(data), dtype=np.uint8) ^ ks).tobytes()


def _words64(state: np.ndarray, words: int) -> np.ndarray:
    """The first ``words`` 64-bit little-endian keystream words of (16, L) blocks: (words, L)."""
    lo = state[0 : 2 * words : 2].astype(np.uint64)
    hi = state[1 : 2 * words : 2].astype(np.uint64)
    return lo | (hi << np.uint64(32))


def _chacha_words(keys: np.ndarray, words: int, nonce: np.ndarray) -> np.ndarray:
    """``words`` 64-bit keystream words (counter 0, 1, …) per key: keys (m, 8) uint32 →
    (m, words) uint64."""
    m = keys.shape[0]
    per = -(-int(words) // 8)  # blocks per key
    if per == 1:
        return _words64(_blocks_t(np.ascontiguousarray(keys.T), np.zeros(m, np.uint32),
                                  nonce), words).T
    keys_t = np.ascontiguousarray(np.repeat(keys, per, axis=0).T)
    ctr = np.tile(np.arange(per, dtype=np.uint32), m)
    w = _words64(_blocks_t(keys_t, ctr, nonce), 8)  # (8, m·per)
    return w.T.reshape(m, per * 8)[:, :words]


def expand_seed(seed: bytes, words: int, prf: str = DEFAULT_PRF, label: bytes = _PAIR_LABEL
                ) -> np.ndarray:
    """``words`` pseudorandom 64-bit words from a 32-byte seed.

    ChaCha20 keyed with the seed, nonce = the first 12 bytes of SHA-256(label), counter
    from 0; SHAKE-128 over ``label ‖ seed``; or the AES-256-CTR keystream under key
    ``seed`` with the first 16 bytes of SHA-256(label) as the initial counter block.
    Words are the keystream's bytes read as little-endian 64-bit integers.

    Parameters
    ----------
    seed : bytes
        32 bytes (256 bits).
    words : int
        How many words.
    prf : str
        One of :data:`PRFS`.
    label : bytes
        The domain-separation label (pair masks, self masks).

    Returns
    -------
    numpy.ndarray
        (words,) uint64.

    Raises
    ------
    ParameterError
        For a seed that is not 32 bytes or an unknown PRF.
    """
    if len(seed) != 32:
        raise ParameterError("a mask seed must be 32 bytes (256 bits)")
    nbytes = 8 * int(words)
    if prf == "chacha20":
        return _chacha_words(_key_words(seed), int(words), _label_nonce(label))[0].copy()
    if prf == "shake128":
        stream = hashlib.shake_128(label + seed).digest(nbytes)
    elif prf == "aes256ctr":
        nonce = hashlib.sha256(label).digest()[:16]
        stream = Cipher(algorithms.AES(seed), modes.CTR(nonce)).encryptor().update(bytes(nbytes))
    else:
        raise ParameterError(f"prf must be one of {', '.join(PRFS)}; got {prf!r}")
    return np.frombuffer(stream, dtype="<u8").astype(np.uint64)


def _expand_many(seeds: np.ndarray, words: int, prf: str, label: bytes) -> np.ndarray:
    """Mask words for many seeds, (m, 8) uint32 words → (m, words) uint64: vectorized
    ChaCha20, or one SHAKE-128/AES call per seed (the slow path, for cross-checks)."""
    if prf == "chacha20":
        return _chacha_words(seeds, words, _label_nonce(label))
    raw = seeds.astype("<u4").view(np.uint8).reshape(-1, 32)
    out = np.empty((seeds.shape[0], words), dtype=np.uint64)
    for r in range(seeds.shape[0]):
        out[r] = expand_seed(raw[r].tobytes(), words, prf, label)
    return out
