"""Runs tests/event_lines (every event type as a JSON line, with hostile
names and contexts) and checks each line with a real JSON parser and
against docs/events.schema.json: one object per line, no duplicate key,
every event type present, every line valid. Exit 77 (skipped) when the
jsonschema module (Debian: python3-jsonschema) is missing."""
import json
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("check_event_lines: skipped: python3-jsonschema is not installed")
    sys.exit(77)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError("duplicate keys: %s" % ", ".join(sorted(dup)))
    return dict(pairs)


def main():
    program, schema_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as out:
        subprocess.run([program, out.name], check=True)
        with open(out.name, "rb") as f:
            raw = f.read()
    text = raw.decode("utf-8")  # strict: every byte must be UTF-8
    lines = text.split("\n")
    assert lines[-1] == "", "the output must end with a newline"
    seen = set()
    for n, line in enumerate(lines[:-1], 1):
        obj = json.loads(line, object_pairs_hook=no_duplicates)
        errors = sorted(validator.iter_errors(obj), key=str)
        if errors:
            raise SystemExit("line %d is not valid: %s\n%s" % (n, errors[0].message, line))
        if list(obj)[:5] != ["event", "ts", "kind", "name", "reason"]:
            raise SystemExit("line %d: the line's own keys come first\n%s" % (n, line))
        if obj.get("ctx", {}).get("name") != "not the object's name":
            raise SystemExit("line %d: the context did not stay under ctx\n%s" % (n, line))
        if "\ufffd" not in obj["name"] or "\"" not in obj["name"]:
            raise SystemExit("line %d: the hostile name did not come through\n%s" % (n, line))
        seen.add(obj["event"])
    every = set(schema["properties"]["event"]["enum"])
    if seen != every:
        raise SystemExit("event types missing: %s" % ", ".join(sorted(every - seen)))
    print("check_event_lines: %d lines, all %d event types, valid JSON and schema"
          % (len(lines) - 1, len(every)))


if __name__ == "__main__":
    main()
