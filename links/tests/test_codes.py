"""Code generation: every strategy gives valid, unique codes; hash codes use the whole alphabet."""

import string

import pytest
from django.core.exceptions import ValidationError
from hypothesis import assume, example, given
from hypothesis import strategies as st

from links.codes import aliases, hashing, pool, sequence, shape, strategies
from links.models import UniqueCode, UniqueCodeStatus, UrlLink
from workspaces.selectors import personal_workspace_of

ALPHANUMERIC = set(string.ascii_letters + string.digits)


def test_check_character_catches_every_single_character_typo():
    body = "aB3xY9"
    code = shape.with_check(body)
    assert shape.has_valid_check(code)
    for position in range(len(code)):
        for replacement in shape.BASE62:
            if replacement == code[position]:
                continue
            typo = code[:position] + replacement + code[position + 1 :]
            assert not shape.has_valid_check(typo), typo


@given(st.text(alphabet=shape.BASE62, min_size=6, max_size=6), st.integers(0, 5))
@example(body="ab0zcd", position=2)
@example(body="abc0c0", position=5)  # "0" and its check character "z"
def test_an_adjacent_swap_is_caught_unless_it_swaps_0_and_z(body, position):
    """A visitor who swaps two neighbouring characters gets a 404 without a lookup; Luhn mod 62
    has one blind spot, 0 and z (like 09 and 90 in decimal Luhn)."""
    code = shape.with_check(body)
    first, second = code[position], code[position + 1]
    assume(first != second)
    swapped = code[:position] + second + first + code[position + 2 :]
    assert shape.has_valid_check(swapped) is ({first, second} == {"0", "z"})


def test_case_matters_for_the_check():
    code = shape.with_check("abcdef")
    assert shape.has_valid_check(code)
    assert not shape.has_valid_check(code.swapcase())


@pytest.mark.django_db
def test_pool_refill_skips_codes_already_taken_by_links_or_the_pool(user, monkeypatch):
    """Random draws collide now and then (~8 % odds for some pair among 100k draws from 62**6);
    a refill stores only codes that no link and no pool row has, and still reaches its count."""
    taken_by_link = UrlLink.objects.create(
        owner=user,
        workspace=personal_workspace_of(user),
        code=shape.with_check("Taken1"),
        long_url="https://example.com/",
        code_type="pool",
    ).code
    taken_by_pool = shape.with_check("Taken2")
    UniqueCode.objects.create(code=taken_by_pool)
    draws = iter([taken_by_link, taken_by_pool, shape.with_check("Fresh1")])
    real = pool.random_code
    monkeypatch.setattr(pool, "random_code", lambda: next(draws, None) or real())
    assert pool.pool_refill(batch=3) == 3
    unused = set(
        UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED).values_list("code", flat=True)
    )
    assert len(unused) == 4  # the old pool row and three new ones
    assert taken_by_link not in unused
    assert shape.with_check("Fresh1") in unused
    assert all(shape.has_valid_check(code) for code in unused)


def test_sequence_codes_are_valid_and_decode_back_to_their_id():
    """Every id gives a valid code that decodes back to it, so no two ids share a code (a
    uniqueness count could not tell: a code space of 62**6 rarely collides by chance)."""
    for seq_id in [*range(1, 20_001), 62**6 // 2, 62**6 - 2, 62**6 - 1]:
        code = sequence.sequence_encode(seq_id)
        assert shape.has_valid_check(code), seq_id
        assert sequence.sequence_decode(code) == seq_id


def test_consecutive_sequence_ids_give_codes_that_differ_in_most_positions():
    differing = []
    for seq_id in range(1, 1001):
        a, b = sequence.sequence_encode(seq_id), sequence.sequence_encode(seq_id + 1)
        differing.append(sum(x != y for x, y in zip(a[:-1], b[:-1], strict=True)))
    body_length = len(sequence.sequence_encode(1)) - 1
    # Neighbouring ids must not give neighbouring codes: on average most characters change.
    assert sum(differing) / len(differing) > body_length * 0.75
    assert min(differing) >= 2


def test_sequence_codes_depend_on_the_secret_key(settings):
    first = sequence.sequence_encode(42)
    settings.SHORTURL_SEQUENCE_KEY = "another secret"
    assert sequence.sequence_encode(42) != first


def test_sequence_rejects_an_alphabet_that_is_not_a_permutation(settings):
    settings.SHORTURL_ALPHABET = "abc"
    with pytest.raises(ValueError, match="permutation"):
        sequence.sequence_encode(1)


def test_hash_strategy_finds_a_free_valid_code_for_each_of_100k_urls():
    """32-bit segments collide now and then (birthday bound); the next candidate takes over,
    so every URL gets a code no earlier URL has, and collisions stay rare."""
    strategy = strategies.get_strategy("hash")
    taken: set[str] = set()
    first_choice_taken = 0
    for i in range(100_000):
        for attempt, candidate in enumerate(strategy.candidates(f"https://example.com/p/{i}")):
            if candidate.code not in taken:
                first_choice_taken += attempt > 0
                taken.add(candidate.code)
                break
        else:
            pytest.fail(f"no free code for URL {i}")
    assert all(shape.has_valid_check(code) for code in taken)
    assert first_choice_taken < 100  # collisions are rare, not routine


def test_hash_codes_use_all_62_characters_in_every_position():
    """The `& 0x3D` mask of the classic sketch can only reach 32 characters; `% 62` reaches all."""
    seen_per_position = [set() for _ in range(6)]
    for i in range(3000):
        for code in hashing.hash_candidates(f"https://example.com/{i}", "salt"):
            for position, ch in enumerate(code[:-1]):
                seen_per_position[position].add(ch)
    for seen in seen_per_position:
        assert seen == ALPHANUMERIC


def test_hash_codes_are_stable_for_the_same_url_and_salt():
    url = "https://example.com/stable"
    assert hashing.hash_candidates(url, "s") == hashing.hash_candidates(url, "s")
    assert hashing.hash_candidates(url, "s") != hashing.hash_candidates(url, "t")


@pytest.mark.parametrize(
    "alias",
    ["ab", "x" * 33, "has space", "slash/es", "ümlaut", "admin", "API", "healthz", "Dashboard"],
)
def test_bad_aliases_are_refused_with_a_reason(alias):
    with pytest.raises(ValidationError) as excinfo:
        aliases.validate_alias(alias)
    assert excinfo.value.message_dict["alias"][0]


def test_aliases_in_the_generated_shape_are_refused():
    with pytest.raises(ValidationError, match="kept for generated codes"):
        aliases.validate_alias("Summer1")


@pytest.mark.parametrize("alias", ["spring-sale", "Q3_launch", "abc", "x" * 32, "Summer-1"])
def test_good_aliases_pass(alias):
    aliases.validate_alias(alias)


@pytest.mark.django_db
def test_pool_refill_stores_unused_valid_codes():
    stored = pool.pool_refill(batch=500)
    assert stored == 500
    rows = list(UniqueCode.objects.values_list("code", "status"))
    assert len(rows) == 500
    assert all(shape.has_valid_check(code) for code, _ in rows)
    assert {status for _, status in rows} == {UniqueCodeStatus.UNUSED}


@pytest.mark.django_db
def test_pool_strategy_hands_each_code_out_once():
    pool.pool_refill(batch=50)
    strategy = strategies.get_strategy("pool")
    handed_out = [next(strategy.candidates("https://example.com")).code for _ in range(50)]
    assert len(set(handed_out)) == 50
    assert (
        UniqueCode.objects.filter(code__in=handed_out, status=UniqueCodeStatus.USED).count() == 50
    )


def test_unknown_strategy_is_a_clear_error():
    with pytest.raises(ValueError, match="SHORTURL_CODE_STRATEGY"):
        strategies.get_strategy("nope")


@pytest.mark.parametrize(
    "candidate",
    ["aB3xY9\u00e9", "aB3xY9\u0661", "aB3-Y9k", "aB3 Y9k", "aB3xY9", "aB3xY9kk"],
    ids=["latin-accent", "arabic-digit", "dash", "space", "short", "long"],
)
def test_only_ascii_letters_and_digits_of_the_right_length_look_generated(candidate):
    """Unicode letters and digits (which str.isalnum accepts) never pass for a generated code."""
    assert not shape.is_generated_shape(candidate)
    assert shape.is_generated_shape(shape.random_code())
