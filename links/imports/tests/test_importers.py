"""Reading other shorteners' files (links.imports.formats): each format told from its content, each
row's old code, URL, title, tags and date read as the source wrote them, and a MySQL dump read
with a real tokenizer (escapes, `),(` and `;` inside strings, other tables, comments). No
database: the parsers are pure."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from links.imports.formats import ImportFileError, detect_format, parse_file
from links.imports.formats.rows import parse_datetime, split_short_link, split_tags
from links.imports.formats.sqldump import insert_rows

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def by_code(parsed) -> dict:
    return {row.code: row for row in parsed.rows}


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("bitly_api_fields.csv", "bitly"),
        ("bitly_export.csv", "bitly"),
        ("yourls_dump.sql", "yourls-sql"),
        ("yourls.csv", "yourls-csv"),
        ("kutt.json", "kutt"),
        ("shlink.json", "shlink"),
        ("shlink.csv", "shlink-csv"),
        ("plain.csv", "plain"),
    ],
)
def test_each_format_is_told_from_its_content(name, fmt):
    assert detect_format(fixture(name).decode()) == fmt
    assert parse_file(fixture(name)).format == fmt


def test_bitly_columns_are_read_under_the_api_names_and_the_exports_spellings():
    api = by_code(parse_file(fixture("bitly_api_fields.csv")))
    spring = api["spring-sale"]
    assert spring.long_url == "https://shop.example.com/spring?utm_source=bitly"
    assert spring.title == "Spring sale, 20% off"
    assert spring.tags == ["spring", "sale"]
    assert spring.created_at == dt.datetime(2021, 3, 1, 9, 0, tzinfo=dt.UTC)
    assert spring.domain is None  # bit.ly is Bitly's: the default domain here
    assert api["newsletter-2023"].archived is True
    assert api["fall"].domain == "go.brand.example"  # a branded domain is kept

    export = parse_file(fixture("bitly_export.csv"))
    rows = by_code(export)
    # A custom back-half is the name people were given: it is the code kept.
    assert rows["summer-eu"].long_url == "https://shop.example.com/summer?lang=en"
    assert "3xYzAbC" in rows["summer-eu"].notes[0]
    assert rows["summer-eu"].tags == ["summer", "eu"]
    assert rows["3WxYz12"].archived is True
    assert rows["3QrStUv"].created_at == dt.datetime(2022, 7, 15, 14, 30, tzinfo=dt.UTC)


def test_bitly_headers_match_whatever_their_case_and_spacing():
    text = "BITLINK;long url;TITLE;Created_At\nbit.ly/x-y-z;https://example.com/;T;2020-01-01\n"
    parsed = parse_file(text.encode())
    assert parsed.format == "bitly"
    row = parsed.rows[0]
    assert (row.code, row.long_url, row.title, row.row) == ("x-y-z", "https://example.com/", "T", 2)


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("bit.ly/3abcDEF", ("bit.ly", "3abcDEF")),
        ("https://bit.ly/3abcDEF", ("bit.ly", "3abcDEF")),
        ("http://Go.Brand.Example/spring/", ("go.brand.example", "spring")),
        ("3abcDEF", (None, "3abcDEF")),
        ("", (None, None)),
    ],
)
def test_the_old_code_is_the_short_links_last_path_segment(link, expected):
    assert split_short_link(link) == expected


def test_a_yourls_dump_is_read_with_its_escapes_and_only_the_url_table():
    parsed = parse_file(fixture("yourls_dump.sql"))
    rows = by_code(parsed)
    # Eleven rows in three INSERTs (one with its column list on one line, one spread over
    # several lines, one without a column list); the log's and options' rows are left alone,
    # as is the INSERT written inside a logged User-Agent string.
    assert len(parsed.rows) == 11
    assert "evil" not in rows
    assert rows["abc"].title == "It's \"quoted\", a \\ backslash and ''doubled''"
    assert rows["xyz9"].title == "Doubled 'single' quotes"
    assert rows["promo"].long_url == "https://shop.example.com/promo?q=),(&r=;"
    assert rows["promo"].title == "Promo; with ),( inside"
    assert rows["multi"].long_url == "https://www.example.com/line\nbreak"
    assert rows["abc"].created_at == dt.datetime(2020, 1, 1, 10, 0, tzinfo=dt.UTC)
    assert rows["unicodé"].long_url == "https://www.example.com/unicode"
    # Each row is placed by the line its "(" is on.
    assert rows["1"].row == 53
    assert rows["dup-a"].row == 58


def test_a_dump_cut_short_keeps_the_rows_before_the_cut_and_says_where():
    text = fixture("yourls_dump.sql").decode()
    cut = text[: text.index("('xyz9'") + 12]  # inside xyz9's URL
    parsed = parse_file(cut.encode())
    assert "abc" in by_code(parsed) and "unicodé" in by_code(parsed)
    assert "xyz9" not in by_code(parsed)
    [(line, reason)] = parsed.problems
    assert line == 60
    assert "ends inside a quoted value" in reason


def test_the_tokenizer_takes_every_mysql_value_spelling():
    sql = (
        "/* a comment; with INSERT INTO `yourls_url` VALUES ('no') */\n"
        "# another\n-- and another\n"
        "INSERT IGNORE INTO `yourls`.`yourls_url` (`keyword`,`url`,`clicks`) VALUES "
        "(_utf8mb4'k1','https://e.com/\\%\\_\\t\\0',-5),('k2',\"https://e.com/\"\"q\",NULL),"
        "('k3','https://e.com/3',0x1F) ON DUPLICATE KEY UPDATE clicks=clicks+1;\n"
        "REPLACE INTO other_table VALUES ('x');"
    )
    rows = list(insert_rows(sql, table_matches=lambda name: name == "yourls_url"))
    assert [row.values for row in rows] == [
        ["k1", "https://e.com/\\%\\_\t\0", -5],
        ["k2", 'https://e.com/"q', None],
        ["k3", "https://e.com/3", 31],
    ]
    assert rows[0].columns == ["keyword", "url", "clicks"]
    assert rows[0].line == 4


def test_yourls_csv_with_or_without_its_header():
    with_header = by_code(parse_file(fixture("yourls.csv")))
    assert with_header["ozh"].title == "Ozh, the author"
    bare = "abc,https://example.com/a,Title,2020-01-01 10:00:00,1.2.3.4,5\n"
    parsed = parse_file(bare.encode())
    assert parsed.format == "yourls-csv"
    assert (parsed.rows[0].code, parsed.rows[0].long_url, parsed.rows[0].row) == (
        "abc",
        "https://example.com/a",
        1,
    )


def test_kutt_objects_give_address_target_and_description_and_flag_what_must_stay():
    rows = by_code(parse_file(fixture("kutt.json")))
    home = rows["kutt-home"]
    assert (home.long_url, home.title, home.domain) == (
        "https://www.example.com/kutt",
        'Kutt\'s "home" page',
        None,
    )
    assert rows["brand-news"].domain == "go.brand.example"
    assert rows["b4nned"].skip_reason == "banned in Kutt"
    assert "password" in rows["secret"].skip_reason
    # A bare list (pages put together) reads the same.
    items = json.loads(fixture("kutt.json"))["data"]
    assert len(parse_file(json.dumps(items).encode()).rows) == 9


def test_shlink_objects_carry_tags_expiry_cap_and_query_forwarding():
    rows = by_code(parse_file(fixture("shlink.json")))
    shoes = rows["12C18"]
    assert shoes.tags == ["shoes", "Sale"]
    assert shoes.created_at == dt.datetime(2016, 8, 21, 11, 22, 17, tzinfo=dt.UTC)
    assert rows["capped"].max_visits == 100
    assert rows["capped"].pass_query is False
    assert rows["until-2099"].expires_at == dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    assert rows["until-2099"].valid_since == dt.datetime(2020, 2, 2, tzinfo=dt.UTC)
    assert rows["until-2099"].notes == []
    assert rows["elsewhere"].domain == "doma.in"
    csv_rows = by_code(parse_file(fixture("shlink.csv")))
    assert csv_rows["12C18"].tags == ["shoes", "Sale"]
    assert csv_rows["12C18"].domain == "go.brand.example"


@pytest.mark.parametrize(
    ("cell", "tags"),
    [
        ("news|promo", ["news", "promo"]),
        ("x;y", ["x", "y"]),
        ("a, b", ["a", "b"]),
        (" solo ", ["solo"]),
        ("", []),
        (["a, b", " c "], ["a, b", "c"]),  # a JSON list is taken as it is
    ],
)
def test_a_tags_cell_splits_on_bars_semicolons_and_commas(cell, tags):
    assert split_tags(cell) == tags


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2021-03-01T09:00:00+0000", dt.datetime(2021, 3, 1, 9, tzinfo=dt.UTC)),
        ("2021-05-01T10:00:00.000Z", dt.datetime(2021, 5, 1, 10, tzinfo=dt.UTC)),
        ("2020-01-01 10:00:00", dt.datetime(2020, 1, 1, 10, tzinfo=dt.UTC)),
        ("01/31/2020", dt.datetime(2020, 1, 31, tzinfo=dt.UTC)),
        (1577872800, dt.datetime(2020, 1, 1, 10, tzinfo=dt.UTC)),
        ("0000-00-00 00:00:00", None),
        ("last Tuesday", None),
        ("", None),
    ],
)
def test_dates_are_read_in_the_spellings_exports_use(value, expected):
    assert parse_datetime(value) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"\xff\xfe\x00garbage\x00\xd8", "UTF"),
        (b"caf\xe9,https://example.com/\n", "not UTF-8"),
        (b"{not json", "not valid JSON"),
        (b'{"something": "else"}', "none of the formats"),
        (b"name,value\nx,1\n", "could not be told"),
        (b"long_url,alias\n", "No links were found"),
    ],
)
def test_a_file_that_cannot_be_read_says_why(data, message):
    with pytest.raises(ImportFileError, match=message):
        parse_file(data)


def test_quotes_doubled_inside_a_quoted_cell_are_one_quote():
    data = 'long_url,title,tags\nhttps://example.com/q,"Say ""hi"", then go","a, b"\n'
    [row] = parse_file(data.encode()).rows
    assert (row.title, row.tags) == ('Say "hi", then go', ["a", "b"])


def test_a_byte_order_mark_and_semicolons_are_fine():
    data = "\ufefflong_url;alias;title\nhttps://example.com/x;xx-1;Hello\n".encode()
    [row] = parse_file(data).rows
    assert (row.long_url, row.code, row.title) == ("https://example.com/x", "xx-1", "Hello")
