"""The one redaction: a table of inputs and what reaches a reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoresearch import redact
from autoresearch.errors import ContractError
from autoresearch.redact import MASK, build, is_secret_name

ANTHROPIC = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-12345"
OPENAI = "sk-proj-ZyXwVuTsRqPoNmLkJiHg0987"
ENV = {
    "ANTHROPIC_API_KEY": ANTHROPIC,
    "MY_SERVICE_TOKEN": "tok-0123456789abcdef",
    "DB_PASSWORD": "hunter2hunter2",
    "STRIPE_KEY": "rk_live_51Habcdefgh",
    "SHORT_TOKEN": "1234567",  # below the length floor: a flag, not a secret
    "FEATURE_TOKEN_ENABLED": "true",
    "TOKENIZERS_PARALLELISM": "false-but-long-enough",  # TOKENIZERS is not a TOKEN segment
    "HOME": "/home/someone/secret-place",
    "PATH": "/usr/bin:/bin",
}


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_API_KEY", True),
        ("OPENAI_API_KEY", True),
        ("GITHUB_TOKEN", True),
        ("GH_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("AWS_SESSION_TOKEN", True),
        ("HF_TOKEN", True),
        ("some_apikey", True),
        ("PGPASSWORD", False),  # no segment boundary: configure a pattern for such names
        ("DB_PASSWORD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("STRIPE_KEY", True),
        ("TOKENIZERS_PARALLELISM", False),
        ("KEYBOARD_LAYOUT", False),
        ("HOME", False),
        ("SSH_AUTH_SOCK", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key={ANTHROPIC} done", f"key={MASK} done"),
        ("token tok-0123456789abcdef in a log", f"token {MASK} in a log"),
        ("pw: hunter2hunter2!", f"pw: {MASK}!"),
        (f"openai {OPENAI}", f"openai {MASK}"),  # a shape, not in the environment
        ("Authorization: Bearer abc.def-ghi_jkl", f"Authorization: Bearer {MASK}"),
        ("authorization: bearer abcdefgh12", f"authorization: bearer {MASK}"),
        ("ghp_abcdefghijklmnopqrstuvwxyz012345", MASK),
        ("id AKIAABCDEFGHIJKLMNOP here", f"id {MASK} here"),
        ("xoxb-1234567890-abcdef", MASK),
        # Ordinary text is left alone.
        ("score 1234567 true false", "score 1234567 true false"),
        (
            "/home/someone/secret-place and /usr/bin:/bin",
            "/home/someone/secret-place and /usr/bin:/bin",
        ),
        ("a task-list and sk-short", "a task-list and sk-short"),
        ("the Bearer of news", "the Bearer of news"),
        ("false-but-long-enough", "false-but-long-enough"),
        ("", ""),
    ],
)
def test_text(text: str, expected: str) -> None:
    assert build(ENV).text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a secret-named variable given a value in the text (a `.env` an agent printed), with
        # no such variable in this environment
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         f"AWS_SECRET_ACCESS_KEY={MASK}"),
        ('export DB_PASSWORD="s3cretpassw0rd"', f'export DB_PASSWORD="{MASK}"'),
        ('{"api_key": "abcd1234efgh"}', f'{{"api_key": "{MASK}"}}'),
        ("  STRIPE_KEY: rk_live_51Habcdefgh", f"  STRIPE_KEY: {MASK}"),
        ("HF_TOKEN=hf_abcdefgh12345 next", f"HF_TOKEN={MASK} next"),
        ("session_token=abc.def.123", f"session_token={MASK}"),
        # code and ordinary assignments stay readable
        ("api_key = os.environ['OPENAI_API_KEY']", "api_key = os.environ['OPENAI_API_KEY']"),
        ("token = get_token(1234567890)", "token = get_token(1234567890)"),
        ("password = self.password", "password = self.password"),
        ("GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}", "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}"),
        ("max_tokens=4096000 sha256=abcdef0123456789", "max_tokens=4096000 sha256=abcdef0123456789"),
        ("TOKENIZERS_PARALLELISM=false1234", "TOKENIZERS_PARALLELISM=false1234"),
        ("DB_PASSWORD=short1", "DB_PASSWORD=short1"),  # below the length floor
        (f"DB_PASSWORD={MASK}", f"DB_PASSWORD={MASK}"),  # masked once, stays so
    ],
)  # fmt: skip
def test_a_value_assigned_to_a_secret_name_in_the_text(text: str, expected: str) -> None:
    assert build({}).text(text) == expected


def test_a_secret_named_key_and_its_value_in_data_are_masked_as_in_text() -> None:
    # the same rule as `NAME=value` in text, so a tool's JSON text and its structured content
    # (the two halves of an MCP reply) agree
    data = {"api_key": "abcd1234efgh", "api_key_env": "OPENAI_API_KEY", "model": "gpt4-mini-24",
            "nested": [{"DB_PASSWORD": "s3cretpassw0rd"}], "prompt_tokens": "12345678"}  # fmt: skip
    assert build({}).value(data) == {
        "api_key": MASK,
        "api_key_env": "OPENAI_API_KEY",  # a name, no digit: no secret
        "model": "gpt4-mini-24",
        "nested": [{"DB_PASSWORD": MASK}],
        "prompt_tokens": "12345678",  # TOKENS is no TOKEN segment
    }


def test_longest_value_wins() -> None:
    r = build({"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-and-more"})
    assert r.text("x abcdefgh-and-more y abcdefgh") == f"x {MASK} y {MASK}"


def test_value_walks_json_like_data() -> None:
    data = {"a": [ANTHROPIC, 1, None, 2.5, True], ANTHROPIC: {"n": ("hunter2hunter2",)}}
    out = build(ENV).value(data)
    assert out == {"a": [MASK, 1, None, 2.5, True], MASK: {"n": (MASK,)}}
    assert data["a"][0] == ANTHROPIC  # a new object; the input is untouched


def test_user_patterns_from_env_and_user_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("AUTORESEARCH_REDACT", r"ACME-\d{4}" + "\n" + "# comment")
    text = "ticket ACME-1234 on intra-42"
    assert redact.redact(text) == f"ticket {MASK} on intra-42"
    (tmp_path / "cfg" / "autoresearch").mkdir(parents=True)
    (tmp_path / "cfg" / "autoresearch" / "redact.txt").write_text("# hosts\n\nintra-[0-9]+\n")
    assert redact.redact(text) == f"ticket {MASK} on {MASK}"  # a new file is read at once


def test_process_environment_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plain-looking-value-123")
    assert redact.redact("v=plain-looking-value-123") == f"v={MASK}"
    assert redact.redact_value({"k": ["plain-looking-value-123"]}) == {"k": [MASK]}


def test_a_secret_set_after_a_redaction_is_masked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "token plain-looking-value-456"
    assert redact.redact(text) == text  # remembered unmasked by this environment's redactor
    monkeypatch.setenv("SERVICE_TOKEN", "plain-looking-value-456")
    assert redact.redact(text) == f"token {MASK}"
    monkeypatch.delenv("SERVICE_TOKEN")
    assert redact.redact(text) == text


def test_a_remembered_text_is_masked_the_same_and_the_memory_is_bounded() -> None:
    masks = build({"X_API_KEY": "abcdefgh12345"})
    for _ in range(2):  # the second time from the redactor's memory
        assert masks.text("key abcdefgh12345 sk-" + "a" * 20) == f"key {MASK} {MASK}"
    for n in range(redact.MEMO_ENTRIES + 10):
        assert masks.text(f"row {n}") == f"row {n}"
    long = "x" * (redact.MEMO_TEXT + 1) + " abcdefgh12345"
    assert masks.text(long).endswith(MASK)
    assert len(masks._memo) == redact.MEMO_ENTRIES and long not in masks._memo


def test_bad_user_pattern_names_the_line_not_the_pattern(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTORESEARCH_REDACT", "ok\n(sk-unclosed-SECRETVALUE")
    with pytest.raises(ContractError) as err:
        redact.redact("x")
    assert "AUTORESEARCH_REDACT: line 2" in err.value.message
    assert "SECRETVALUE" not in err.value.message


# What a reader's text is made of around secrets: names, separators, quotes, line breaks, the
# Bearer scheme in any case, key shapes, and letters whose case folds to ASCII (ſ, K).
PIECES = ("Bearer", "bEaReR", " ", "\t", "\n", "\r", "=", ":", '"', "'", "(", "[", "api_key",
          "MY_TOKEN", "password", "x", "abc123def456", "0123456789", "_", "-", ".", "/", "sk-",
          "ghp_", "AKIA", "AbCdEfGhIjKlMnOpQrStUvWx", "ſ", "K", "hunter2hunter2",
          # whole ones, and ones cut at a separator or a line break
          "api_key = abc123def456", "MY_TOKEN:0123456789", 'password="hunter2hunter2"',
          "Bearer abc123def456", "bEaReR\tabc123def456", "Bearer\nabc123def456",
          "api_key\n=abc123def456",
          "MY_TOKEN =\n0123456789")  # fmt: skip


def masked_whole(redactor: redact.Redactor, text: str) -> str:
    """The masking as each pattern over the whole text at once: what a view always showed."""
    if redactor._combined is not None:
        text = redactor._combined.sub(MASK, text)
    text = redact._BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    return redact._ASSIGNED.sub(redact._assigned, text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.booleans())
def test_masking_line_by_line_is_masking_the_whole_text(pieces: list[str], env: bool) -> None:
    # the assignments are masked line by line and Bearer only where its word is: the same text
    redactor = build(ENV if env else {}, ("x+y",) if env else ())
    text = "".join(pieces)
    assert redactor._masked(text) == masked_whole(redactor, text)


def test_a_redactor_shown_in_a_log_or_a_traceback_names_no_secret() -> None:
    # a redactor holds the secrets it masks: printing it (a debug log, a traceback's locals)
    # must not print them
    masks = build(ENV)
    assert ANTHROPIC in masks.values  # it does hold them
    for shown in (repr(masks), str(masks)):
        assert ANTHROPIC not in shown and "hunter2" not in shown
