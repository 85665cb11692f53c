"""The vectorized ChaCha20 behind the secure-aggregation masks: RFC 8439's test vectors and
agreement with an independent implementation (``cryptography``) on random keys."""

import hashlib

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from dpstudio.engine.distributed import secagg
from dpstudio.engine.errors import ParameterError

RFC_KEY = bytes(range(32))


def reference_keystream(key: bytes, counter: int, nonce: bytes, nbytes: int) -> bytes:
    # cryptography's 16-byte nonce is the 32-bit little-endian counter ‖ the 96-bit nonce.
    nonce16 = counter.to_bytes(4, "little") + nonce
    return Cipher(algorithms.ChaCha20(key, nonce16), mode=None).encryptor().update(
        bytes(nbytes))


def test_rfc8439_block_function():
    # RFC 8439 §2.3.2: key 00 01 … 1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
    nonce = bytes.fromhex("000000090000004a00000000")
    block = secagg.chacha20_blocks(RFC_KEY, 1, nonce)
    assert block.shape == (1, 16)
    words = [0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3, 0xC7F4D1C7, 0x0368C033,
             0x9AAA2204, 0x4E6CD4C3, 0x466482D2, 0x09AA9F07, 0x05D7C214, 0xA2028BD9,
             0xD19C12B5, 0xB94E16DE, 0xE883D0CB, 0x4E3C50A2]
    assert block[0].tolist() == words
    serialized = (
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    assert block[0].astype("<u4").tobytes().hex() == serialized


def test_rfc8439_encryption():
    # RFC 8439 §2.4.2: the "sunscreen" plaintext under the same key, nonce …4a…, counter 1.
    nonce = bytes.fromhex("000000000000004a00000000")
    plaintext = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one "
                 b"tip for the future, sunscreen would be it.")
    ciphertext = bytes.fromhex(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d")
    assert secagg.chacha20_encrypt(RFC_KEY, 1, nonce, plaintext) == ciphertext
    assert secagg.chacha20_encrypt(RFC_KEY, 1, nonce, ciphertext) == plaintext


def test_rfc8439_all_zero_key_block():
    # RFC 8439 Appendix A.1, test vector #1: zero key, zero nonce, counter 0.
    expected = (
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
    assert secagg.chacha20_blocks(bytes(32), 0, bytes(12))[0].astype(
        "<u4").tobytes().hex() == expected


def test_many_random_keys_match_cryptography():
    # More lanes than one pass of the round function handles, so the chunking is covered;
    # per-lane keys, counters (up to 2^32 − 1) and nonces.
    rng = np.random.default_rng(8439)
    lanes = secagg._LANES + 1500
    keys = rng.integers(0, 256, size=(lanes, 32), dtype=np.uint8)
    counters = rng.integers(0, 2**32, size=lanes)
    counters[:3] = [0, 1, 2**32 - 1]
    nonces = rng.integers(0, 2**32, size=(lanes, 3), dtype=np.uint32)
    blocks = secagg.chacha20_blocks(keys, counters, nonces)
    for i in list(range(0, lanes, 7)) + [lanes - 1]:
        ref = reference_keystream(keys[i].tobytes(), int(counters[i]),
                                  nonces[i].astype("<u4").tobytes(), 64)
        assert blocks[i].astype("<u4").tobytes() == ref, i


@pytest.mark.parametrize("words", [1, 3, 8, 9, 20, 1000])
def test_mask_words_are_the_chacha20_keystream(words):
    rng = np.random.default_rng(words)
    seeds = rng.integers(0, 256, size=(5, 32), dtype=np.uint8)
    nonce = hashlib.sha256(secagg._PAIR_LABEL).digest()[:12]
    many = secagg._expand_many(seeds.view("<u4").astype(np.uint32), words, "chacha20",
                               secagg._PAIR_LABEL)
    assert many.shape == (5, words) and many.dtype == np.uint64
    for i in range(5):
        stream = reference_keystream(seeds[i].tobytes(), 0, nonce, 8 * words)
        expected = np.frombuffer(stream, dtype="<u8")
        np.testing.assert_array_equal(many[i], expected)
        np.testing.assert_array_equal(secagg.expand_seed(seeds[i].tobytes(), words), expected)


def test_chacha20_input_checks():
    with pytest.raises(ParameterError):
        secagg.chacha20_blocks(bytes(16), 0, bytes(12))
    with pytest.raises(ParameterError):
        secagg.chacha20_blocks(bytes(32), 0, bytes(8))
    with pytest.raises(ParameterError):
        secagg.chacha20_blocks(bytes(32), 2**32, bytes(12))
    with pytest.raises(ParameterError):
        secagg.chacha20_encrypt(bytes(32), 2**32 - 1, bytes(12), bytes(65))
