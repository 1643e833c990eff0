"""Every column has a role; identifiers are masked or pseudonymized inside the guarded output
(issue 26): refusal of undeclared columns, the masking methods, the key that is never
written anywhere, masks that hold after publication, and ``profile``."""

from __future__ import annotations

import json
import string

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import anonsql
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.masking.keys import KEY_ENV, MaskKey, load_key
from anonsql.masking.methods import Tokenizer, parse_mask, sql_mask
from anonsql.masking.profile import profile_table
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.people import KEY, OTHER_KEY, QIS, cells, file_hits, load_people, raw_values

GOAL = {"qi": QIS, "sensitive": "diagnosis", "k": 5, "l": 2}
MASKS = {"name": "pseudonym", "email": "pseudonym", "phone": "token"}


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.fixture
def people_db(tmp_path):
    db = Database.open(tmp_path / "p.duckdb")
    frame = load_people(db)
    yield db, frame
    db.close()


def _spec(**extra) -> Spec:
    fields = {"qis": list(QIS), "sensitive": "diagnosis", "k": 5, "l": 2, **extra}
    return Spec(**fields)


# -- every column has a role ------------------------------------------------------------------
def test_undeclared_columns_are_refused_naming_each_with_its_profile(people_db):
    db, _ = people_db
    with pytest.raises(InputError) as e:
        anonymize(db, "people", _spec(output="v"))
    msg = str(e.value)
    assert "\n" not in msg
    for c in ("name", "email", "phone", "income"):
        assert repr(c) in msg
    assert "email, VARCHAR, unique in 100%" in msg and "--mask email=pseudonym" in msg
    assert "--keep" in msg
    assert not db.backend.table_exists("v")  # nothing written


def test_the_new_users_sequence_on_the_cli(tmp_path, key_env):
    path = tmp_path / "p.duckdb"
    db = Database.open(path)
    frame = load_people(db)
    db.close()
    runner = CliRunner()
    base = ["anonymize", "people", "--qi", ",".join(QIS), "--sa", "diagnosis"]
    base += ["--k", "5", "--l", "2", "--db", str(path)]
    refused = runner.invoke(cli, [*base, "--out", "v"])
    assert refused.exit_code == 1
    assert "'name'" in refused.output and "'email'" in refused.output
    masks = ["--mask", "name=pseudonym,email=pseudonym", "--mask", "phone=token"]
    ok = runner.invoke(cli, [*base, "--out", "v", *masks, "--keep", "income"])
    assert ok.exit_code == 0, ok.output
    con = duckdb.connect(str(path))
    view = con.sql("SELECT * FROM v").df()
    con.close()
    assert len(view) == len(frame)
    assert not cells(view) & raw_values(frame)
    assert KEY not in ok.output


def test_a_kept_identifier_or_identifying_qi_needs_the_override(people_db):
    db, _ = people_db
    with pytest.raises(InputError, match=r"'email' .*cannot be kept raw.*--allow-identifying"):
        anonymize(db, "people", _spec(output="v", keep=["email", "income", "name", "phone"]))
    spec = _spec(qis=[*QIS, "email"], output="v", masks={"name": "drop", "phone": "drop"})
    spec.keep = ["income"]
    with pytest.raises(InputError, match="cannot be a quasi-identifier"):
        anonymize(db, "people", spec)
    # the override publishes it (and says so in the run's roles)
    spec = _spec(
        output="v",
        keep=["email", "income"],
        masks={"name": "drop", "phone": "null"},
        allow_identifying=["email"],
    )
    res = anonymize(db, "people", spec)
    assert "email" in res.to_frame(db).columns
    from anonsql.output.status import output_status

    assert output_status(db, "v")[0].roles["email"] == "kept"


def test_a_column_with_two_roles_is_an_error(people_db):
    db, _ = people_db
    for extra in (
        {"keep": ["zip"]},
        {"masks": {"diagnosis": "null"}},
        {"keep": ["name"], "masks": {"name": "null"}},
    ):
        with pytest.raises(InputError, match=r"cannot be both|two roles"):
            anonymize(db, "people", _spec(output="v", **extra))


def test_columns_chooses_the_output_and_only_those_need_a_role(people_db):
    db, frame = people_db
    res = anonymize(db, "people", _spec(output="v", columns=[*QIS, "diagnosis"]))
    out = res.to_frame(db)
    assert list(out.columns) == [*QIS, "diagnosis"]
    assert not cells(out) & raw_values(frame)


# -- the methods ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "value", "expected"),
    [
        ("partial:2:2", "4111111111111111", "41************11"),
        ("partial:0:4", "555-123-4567", "********4567"),
        ("partial:1:0", "Ann", "A**"),
        ("partial:2:2", "abcd", "****"),  # no longer than what would be kept: all masked
        ("partial:2:2", "", ""),
        ("email-domain", "ann.lee@example.com", "example.com"),
        ("email-domain", "odd@name@host.example", "host.example"),
        ("email-domain", "no-at-sign", None),
        ("null", "anything", None),
    ],
)
def test_keyless_methods_on_fixed_cases(method, value, expected):
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT ?::VARCHAR AS x", [value])
    from sqlglot import exp

    q = exp.select(sql_mask(parse_mask("x", method), exp.column("x"))).from_("t")
    assert con.sql(q.sql("duckdb")).fetchall()[0][0] == expected


def test_method_parsing_errors_are_one_line():
    for bad in ("hash", "partial:2", "partial:a:b", "fake:nonsense", "null:1", ""):
        with pytest.raises(InputError) as e:
            parse_mask("c", bad)
        assert "\n" not in str(e.value)


_TEXT = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + "-@. _+()é"), max_size=70
)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_format_preserving_tokens_keep_the_format(value):
    tok = Tokenizer(MaskKey(KEY.encode()))
    t = tok.token(value)
    assert len(t) == len(value)
    for a, b in zip(value, t, strict=True):
        if a in string.digits:
            assert b in string.digits
        elif a in string.ascii_lowercase:
            assert b in string.ascii_lowercase
        elif a in string.ascii_uppercase:
            assert b in string.ascii_uppercase
        else:
            assert a == b
    assert tok.token(value) == t  # deterministic


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=string.digits + string.ascii_letters, max_size=12), unique=True))
def test_format_preserving_tokens_are_one_to_one(values):
    tok = Tokenizer(MaskKey(KEY.encode()))
    assert len({tok.token(v) for v in values}) == len(values)


def test_ff3_is_used_where_the_standard_applies():
    """A digit string of 6 to 56 characters is FF3-1's ciphertext under the derived key and
    tweak: decrypting it with them gives the value back."""
    from ff3 import FF3Cipher

    key = MaskKey(KEY.encode())
    t = Tokenizer(key).token("4111111111111111")
    aes = key.derive("anonsql ff3-1 aes-256 key", 32).hex()
    tweak = key.derive("anonsql ff3-1 tweak 10 0", 7).hex()
    cipher = FF3Cipher.withCustomAlphabet(aes, tweak, string.digits)
    assert cipher.decrypt(t) == "4111111111111111"


def test_pseudonyms_depend_on_the_key_and_the_value_only():
    a, b = Tokenizer(MaskKey(KEY.encode())), Tokenizer(MaskKey(OTHER_KEY.encode()))
    assert a.pseudonym("x@example.com") == a.pseudonym("x@example.com")
    assert a.pseudonym("x@example.com") != b.pseudonym("x@example.com")
    assert len(a.pseudonym("x")) == 20
    assert a.fake("Ann Lee", "name") == a.fake("Ann Lee", "name")
    assert a.token("555-1234") != b.token("555-1234")


def test_the_same_key_gives_the_same_tokens_across_tables_and_runs(tmp_path, key_env):
    db = Database.open(tmp_path / "a.duckdb")
    frame = load_people(db, rows=600)
    db.backend.execute("CREATE TABLE people2 AS SELECT * FROM people")
    spec = dict(masks=MASKS, keep=["income"])
    r1 = anonymize(db, "people", _spec(output="v1", **spec)).to_frame(db)
    r2 = anonymize(db, "people2", _spec(output="v2", **spec)).to_frame(db)
    r3 = anonymize(db, "people", _spec(output="v3", **spec)).to_frame(db)
    for c in ("name", "email", "phone"):
        assert sorted(r1[c]) == sorted(r2[c]) == sorted(r3[c]), c
    other = Tokenizer(MaskKey(OTHER_KEY.encode()))
    assert set(r1["email"]).isdisjoint(other.pseudonym(e) for e in frame["email"])
    db.close()


def test_fake_values_are_realistic_and_deterministic(people_db, key_env):
    db, frame = people_db
    spec = _spec(output="v", masks={"name": "fake", "email": "fake", "phone": "drop"})
    spec.keep = ["income"]
    out = anonymize(db, "people", spec).to_frame(db)
    assert out["email"].str.contains("@").all()
    assert out["name"].str.contains(" ").mean() > 0.9
    again = anonymize(db, "people", _spec(output="v", replace=True, **_kw(spec))).to_frame(db)
    assert out["name"].tolist() == again["name"].tolist()
    assert "phone" not in out.columns
    assert (out["email"] != frame["email"]).all()


def _kw(spec: Spec) -> dict:
    return {"masks": spec.masks, "keep": spec.keep}


# -- the key -------------------------------------------------------------------------------
def test_a_run_that_needs_a_key_and_has_none_writes_nothing(people_db, monkeypatch):
    db, _ = people_db
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(InputError, match="masking key is needed"):
        anonymize(db, "people", _spec(output="v", masks=MASKS, keep=["income"]))
    assert not db.backend.table_exists("v")


def test_key_errors_never_show_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "short-s3cret")
    with pytest.raises(InputError) as e:
        load_key(None)
    assert "short-s3cret" not in str(e.value) and "12 bytes" in str(e.value)
    f = tmp_path / "k"
    f.write_text("tiny-s3cret\n")
    with pytest.raises(InputError) as e:
        load_key(str(f))
    assert "tiny-s3cret" not in str(e.value)
    assert "hidden" in repr(MaskKey(b"0123456789abcdef0123")) and "0123" not in repr(
        MaskKey(b"0123456789abcdef0123")
    )


def test_the_key_reaches_no_file_and_no_message(tmp_path, monkeypatch):
    """A run with a key file, then every surface that writes: the database file, an export,
    the report, transpiled scripts, status and check, JSON output. The key's bytes appear in
    none, and no raw identifier appears in any released cell or script."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    key_file = tmp_path / "mask.key"
    key_file.write_text(KEY + "\n")
    path = tmp_path / "p.duckdb"
    db = Database.open(path)
    frame = load_people(db)
    db.close()
    runner = CliRunner()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    common = ["--db", str(path)]
    outputs = []
    args = ["anonymize", "people", "--qi", ",".join(QIS), "--sa", "diagnosis", "--k", "5"]
    args += ["--l", "2", "--keep", "income", "--key-file", str(key_file), "--json"]
    for materialize in ("view", "table"):
        res = runner.invoke(
            cli,
            [
                *args,
                "--out",
                f"o_{materialize}",
                "--materialize",
                materialize,
                *common,
                "--mask",
                "name=token,email=pseudonym,phone=partial:0:2",
            ],
        )
        assert res.exit_code == 0, res.output
        outputs.append(res.output)
    for cmd in (
        ["export", "o_view", str(out_dir / "o.csv")],
        ["export", "o_table", str(out_dir / "o.parquet")],
        ["report", "1", "--out", str(out_dir)],
        ["transpile", "1", "--dialect", "postgres", "--out", str(out_dir / "deploy_pg.sql")],
        ["transpile", "2", "--dialect", "duckdb", "--out", str(out_dir / "deploy.sql")],
        ["status", "--json"],
        ["check", "o_view", "--qi", ",".join(QIS), "--k", "5", "--json"],
        ["runs", "--json"],
    ):
        res = runner.invoke(cli, [*cmd, *common])
        assert res.exit_code in (0, 1), res.output
        outputs.append(res.output)
    everything = "\n".join(outputs)
    assert KEY not in everything
    for p in (path, out_dir):
        assert file_hits(p, {KEY}) == []
    raws = raw_values(frame)
    assert file_hits(out_dir, raws) == []
    con = duckdb.connect(str(path))
    for name in ("o_view", "o_table"):
        released = con.sql(f"SELECT * FROM {name}").df()
        assert not cells(released) & raws
    stored = con.sql("SELECT * FROM anonsql_masks").df()
    con.close()
    # the side table maps values to tokens (protected as anonsql_recodings is); no token is
    # a raw value
    assert not set(stored["token"]) & raws and stored["digest"].isna().all()
    csv = pd.read_csv(out_dir / "o.csv", dtype=str)
    assert not cells(csv) & raws
    report = json.loads((out_dir / "anonsql_run_1.json").read_text())
    assert report["roles"]["email"] == "masked: pseudonym"
    assert report["roles"]["income"] == "kept"


# -- after publication -----------------------------------------------------------------------
def test_identifiers_inserted_or_updated_later_are_never_shown_raw(people_db, key_env):
    db, frame = people_db
    masks = {"name": "pseudonym", "email": "token", "phone": "partial:0:2"}
    anonymize(db, "people", _spec(output="v", masks=masks, keep=["income"]))
    be = db.backend
    first = frame.iloc[0]
    new = [
        ("Zed Newcomer", "zed.new@example.com", "999-555-0101"),
        ("Ya Later", "ya.later@example.com", "999-555-0102"),
    ]
    for i, (n, e, p) in enumerate(new):
        be.execute(
            "INSERT INTO people SELECT ?, ?, ?, birth_date, zip, gender, income, diagnosis "
            "FROM people LIMIT 1 OFFSET ?",
            [n, e, p, i],
        )
    be.execute(
        "UPDATE people SET email = 'changed.person@example.com', name = 'Changed Person' "
        "WHERE email = ?",
        [first["email"]],
    )
    view = be.fetch_df("SELECT * FROM v")
    raws = raw_values(frame) | {v for row in new for v in row}
    raws |= {"changed.person@example.com", "Changed Person"}
    assert not cells(view) & raws
    # a value the run never saw has no token: NULL, not raw
    assert view["email"].isna().sum() == 3


# -- every surface ---------------------------------------------------------------------------
def test_sql_statements_declare_roles_and_masks(people_db, key_env):
    db, frame = people_db
    from anonsql.connection import Connection

    con = Connection(db)
    con.sql(
        "CREATE VIEW v AS SELECT * FROM people WITH ANONYMIZATION (ALGORITHM 'L-DIVERSITY' "
        'PARAMETERS \'{"k": 5, "l": 2}\' '
        "COLUMN birth_date PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN zip PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN gender PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN diagnosis PARAMETERS '{\"is_sensitive\": true}' "
        "COLUMN income PARAMETERS '{\"is_insensitive\": true}' "
        'COLUMN name PARAMETERS \'{"mask": "pseudonym"}\' '
        'COLUMN email PARAMETERS \'{"mask": "email-domain"}\' '
        "COLUMN phone PARAMETERS '{\"is_identifier\": true}')"
    )
    view = db.backend.fetch_df("SELECT * FROM v")
    assert "phone" not in view.columns and not cells(view) & raw_values(frame)
    assert set(view["email"]) <= {"example.com", "example.org", "example.net", "mail.example",
                                  "post.example"}  # fmt: skip
    con.sql(
        "ANONYMIZE TABLE people INTO w WITH (k = 5, qi = (birth_date, zip, gender), "
        "keep = (income, diagnosis), mask = (name = 'null', email = 'drop', phone = 'token'))"
    )
    w = db.backend.fetch_df("SELECT * FROM w")
    assert w["name"].isna().all() and "email" not in w.columns
    with pytest.raises(InputError, match="no role"):
        con.sql(
            "ANONYMIZE TABLE people INTO x WITH (k = 5, qi = (birth_date, zip, gender), "
            "keep = (income, diagnosis))"
        )


def test_spec_file_and_api_take_roles(tmp_path, key_env):
    path = tmp_path / "p.duckdb"
    db = Database.open(path)
    frame = load_people(db)
    db.close()
    (tmp_path / "mask.key").write_text(OTHER_KEY)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'table = "people"\ndatabase = "p.duckdb"\nqi = ["birth_date", "zip", "gender"]\n'
        'sensitive = "diagnosis"\nk = 5\nl = 2\noutput = "v"\nkeep = ["income"]\n'
        'key_file = "mask.key"\n[mask]\nname = "token"\nemail = "pseudonym"\n'
        'phone = "partial:0:4"\n'
    )
    res = CliRunner().invoke(cli, ["run", str(spec)])
    assert res.exit_code == 0, res.output
    run = anonsql.anonymize(
        (str(path), "people"),
        {**GOAL, "output": "w", "keep": ["income"], "mask": "name=drop,email=pseudonym,phone=null"},
    )
    w = run.to_frame()
    assert "name" not in w.columns and w["phone"].isna().all()
    v = run.database.backend.fetch_df("SELECT * FROM v")
    # the spec file's key (OTHER_KEY) and the environment's (KEY) give other pseudonyms
    assert set(v["email"]).isdisjoint(set(w["email"]))
    assert not (cells(v) | cells(w)) & raw_values(frame)


def test_anonymize_file_masks(tmp_path, key_env):
    from anonsql.demo.people import people

    frame = people(800)
    src = tmp_path / "people.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(
        cli,
        [
            "anonymize-file",
            str(src),
            "--qi",
            "zip,gender",
            "--k",
            "5",
            "--out",
            str(out),
            "--algorithm",
            "mondrian",
            "--keep",
            "income,diagnosis",
            "--mask",
            "name=token,email=email-domain,phone=pseudonym,birth_date=drop",
        ],
    )
    assert res.exit_code == 0, res.output
    assert file_hits(out, raw_values(frame)) == []
    assert file_hits(out, {KEY}) == []


@pytest.mark.parametrize("algorithm", ["flash", "greedy", "mondrian", "mdav", "rho-gain"])
def test_every_algorithm_writes_masks_through_the_one_writer(tmp_path, key_env, algorithm):
    db = Database.open(":memory:")
    frame = load_people(db, rows=400)
    db.backend.execute("ALTER TABLE people ADD COLUMN yob INTEGER")
    db.backend.execute("UPDATE people SET yob = year(birth_date)")
    qis = ["yob", "income"] if algorithm == "mdav" else QIS
    if algorithm == "mondrian":
        qis = ["yob", "gender"]
    rest = [c for c in ("zip", "gender", "income", "yob") if c not in qis]
    # a raw birth date is unique in 400 rows: kept raw it would be refused, so it is dropped
    dates = {} if "birth_date" in qis else {"birth_date": "drop"}
    spec = Spec(
        qis=qis,
        sensitive="diagnosis" if algorithm in ("flash", "mondrian") else None,
        k=5,
        l=2 if algorithm in ("flash", "mondrian") else None,
        algorithm=algorithm,
        output="v",
        suppression=0.1 if algorithm == "rho-gain" else 0.0,
        keep=rest + ([] if algorithm in ("flash", "mondrian") else ["diagnosis"]),
        masks={"name": "pseudonym", "email": "token", "phone": "partial:0:2", **dates},
        rho=1 if algorithm == "rho-gain" else None,
    )
    out = anonymize(db, "people", spec).to_frame(db)
    assert len(out) == len(frame)
    assert not cells(out) & raw_values(frame)
    assert out["email"].notna().all()
    db.close()


# -- profile -----------------------------------------------------------------------------------
def _kinds_table(rows: int = 300) -> pd.DataFrame:
    from faker import Faker

    f = Faker("en_US")
    f.seed_instance(3)
    return pd.DataFrame(
        {
            "email": [f.unique.email() for _ in range(rows)],
            "phone": [f.phone_number() for _ in range(rows)],
            "ip": [f.ipv4() for _ in range(rows)],
            "iban": [f.iban() for _ in range(rows)],
            "card": [f.credit_card_number() for _ in range(rows)],
            "url": [f.url() + str(i) for i in range(rows)],
            "full_name": [f.name() for _ in range(rows)],
            "born": [f.date_of_birth() for _ in range(rows)],
            "seen_at": [f.date_time_this_decade() for _ in range(rows)],
            "postcode": [f.postcode() for _ in range(rows)],
            "notes": [f.paragraph(nb_sentences=3) for _ in range(rows)],
            "sex": [f.random_element(["F", "M"]) for _ in range(rows)],
            "weight": [round(f.pyfloat(min_value=40, max_value=120), 1) for _ in range(rows)],
            "customer_id": [f"C{i:07d}" for i in range(rows)],
        }
    )


def test_profile_detects_every_kind(tmp_path):
    db = Database.open(":memory:")
    db.backend.write_frame("t", _kinds_table())
    got = {p.column: p for p in profile_table(db, "t")}
    expected = {
        "email": "email",
        "phone": "phone",
        "ip": "ip-address",
        "iban": "iban",
        "card": "card-number",
        "url": "url",
        "full_name": "person-name",
        "born": "date",
        "seen_at": "timestamp",
        "postcode": "postal-code",
        "notes": "free-text",
        "sex": "category",
        "weight": "number",
    }
    assert {c: got[c].kind for c in expected} == expected
    for c in ("email", "phone", "ip", "iban", "card", "url", "full_name", "customer_id"):
        assert got[c].looks_identifying and got[c].suggested_role == "identifier", c
    assert got["customer_id"].unique_share == 1.0  # identifying by uniqueness alone
    for p in got.values():
        if p.identifying_as_qi:  # never suggested as a QI
            assert p.suggested_role == "identifier"
            assert p.suggestion.startswith("--mask")
    assert got["postcode"].suggested_role == "quasi-identifier"
    assert "--mask 1" in got["postcode"].suggestion
    assert "--dates" in got["born"].suggestion
    assert got["sex"].null_share == 0.0 and got["sex"].distinct == 2
    db.close()


def test_profile_counts_against_pandas():
    frame = pd.DataFrame({"a": ["x", "x", "y", None, "z"], "b": [1, 2, 3, 4, 4]})
    db = Database.open(":memory:")
    db.backend.write_frame("t", frame)
    got = {p.column: p for p in profile_table(db, "t")}
    for c in frame.columns:
        counts = frame[c].value_counts(dropna=True)
        assert got[c].distinct == frame[c].nunique()
        assert got[c].unique_share == (counts == 1).sum() / len(frame)
        assert got[c].null_share == frame[c].isna().mean()
    db.close()


def test_profile_cli_and_api(people_db):
    db, _ = people_db
    prof = anonsql.profile(db, "people")
    assert [p.column for p in prof.columns][:3] == ["name", "email", "phone"]
    assert "<table" in prof._repr_html_()


def test_profile_cli_prints_a_table_and_json(tmp_path):
    path = tmp_path / "p.duckdb"
    db = Database.open(path)
    load_people(db, rows=300)
    db.close()
    res = CliRunner().invoke(cli, ["profile", "people", "--db", str(path)])
    assert res.exit_code == 0, res.output
    assert "email" in res.output and "--mask email=pseudonym" in res.output
    res = CliRunner().invoke(cli, ["profile", "people", "--db", str(path), "--json"])
    doc = json.loads(res.output)
    assert doc["kind"] == "profile"
    assert {c["column"]: c["kind"] for c in doc["columns"]}["phone"] == "phone"


# -- the server engines ----------------------------------------------------------------------
def test_masks_and_profile_on_every_engine_equal_duckdb(engine, key_env):
    """The same key gives the same pseudonyms and tokens on PostgreSQL and Spark as on
    DuckDB, the key-less methods agree, and so does ``profile``."""
    masks = {"name": "pseudonym", "email": "token", "phone": "partial:0:4"}
    local = Database.open(":memory:")
    frame = load_people(local, rows=300)
    want = anonymize(local, "people", _spec(output="v", masks=masks, keep=["income"]))
    want_df = want.to_frame(local).sort_values("email").reset_index(drop=True)
    db = engine()
    load_people(db, rows=300)
    got = anonymize(db, "people", _spec(output="v", masks=masks, keep=["income"]))
    got_df = got.to_frame(db).sort_values("email").reset_index(drop=True)
    for c in ("name", "email", "phone"):
        assert got_df[c].tolist() == want_df[c].tolist(), c
    assert not cells(got_df) & raw_values(frame)
    # profile: one pass of counts, one GROUPING SETS and a sample, in the engine: the same
    # figures and kinds as on DuckDB (the type family may differ: a frame's dates are stored
    # as text by some engines' loaders)
    want_p = {p.column: p for p in profile_table(local, "people")}
    got_p = {p.column: p for p in profile_table(db, "people")}
    for c, w in want_p.items():
        g = got_p[c]
        assert (g.distinct, g.null_share, g.unique_share, g.kind, g.suggested_role) == (
            w.distinct,
            w.null_share,
            w.unique_share,
            w.kind,
            w.suggested_role,
        ), c
    local.close()


def test_a_deployed_script_reads_tokens_by_digest(people_db, key_env, tmp_path):
    """The transpiled script carries digests, not values; run in a fresh database holding the
    same source, its view releases the same tokens as the original view."""
    from anonsql.output.deploy import deployment_script

    db, frame = people_db
    # (fake names could be real ones: the check for raw values uses the other methods)
    masks = {"name": "token", "email": "pseudonym", "phone": "token"}
    res = anonymize(db, "people", _spec(output="v", masks=masks, keep=["income"]))
    want = res.to_frame(db).sort_values("email").reset_index(drop=True)
    script = deployment_script(db, res.run_id, "duckdb")
    assert not {v for v in raw_values(frame) if v in script}
    target = duckdb.connect()
    target.register("src", frame)
    target.execute("CREATE TABLE people AS SELECT * FROM src")
    target.execute(script)
    got = target.sql("SELECT * FROM v").df().sort_values("email").reset_index(drop=True)
    for c in ("name", "email", "phone"):
        assert got[c].tolist() == want[c].tolist(), c
