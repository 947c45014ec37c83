"""Checks for tests/prometheus/run.sh: the dashboard and the alert rules against the
documentation and against a Prometheus that scrapes a live webhookd.

  check.py docs DASHBOARD ALERTS DOC
      every runbook_url anchor of ALERTS is a heading of DOC, and every webhookd_ metric
      DASHBOARD or ALERTS names is mentioned in DOC.
  check.py series PROMETHEUS_URL DASHBOARD ALERTS [--allow-missing NAME,...]
      Prometheus loaded every rule of ALERTS and evaluates each without error; every
      metric the dashboard's queries and the rules use has a series, and so does every
      label=value they select on (and every label they group by), except the names
      allowed to be missing; every dashboard query is valid PromQL.

Only the standard library: no YAML or PromQL parser is assumed on the machine, so the
few shapes of PromQL these files use are read by the small lexer below.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = {"and", "or", "unless", "bool", "offset"} | GROUPING
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<var>\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)
  | (?P<number>[0-9][0-9.eE+]*[a-z]*)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=,(){}\[\]])
""", re.VERBOSE)


def lex(expr):
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot read {expr[pos:pos + 20]!r} in {expr!r}")
        pos = m.end()
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
    return out


def unquote(s):
    return s[1:-1].encode().decode("unicode_escape")


def parse(expr):
    """Returns (selectors, grouping labels): selectors as (metric, [(label, op, value)])."""
    toks = lex(expr)
    selectors, grouping = [], []
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else None
        if kind == "op" and text == "[":  # a range or a subquery: durations, $__rate_interval
            while toks[i][1] != "]":
                i += 1
        elif kind == "ident" and text in GROUPING and nxt == "(":
            i += 2
            while toks[i][1] != ")":
                if toks[i][0] == "ident":
                    grouping.append(toks[i][1])
                i += 1
        elif kind == "ident" and (nxt == "(" or text in AGGREGATIONS or text in KEYWORDS):
            pass  # a function, an aggregation or a keyword
        elif kind == "ident":
            matchers = []
            if nxt == "{":
                i += 2
                while toks[i][1] != "}":
                    if toks[i][0] == "ident":
                        label, op, value = toks[i][1], toks[i + 1][1], toks[i + 2][1]
                        matchers.append((label, op, unquote(value)))
                        i += 2
                    i += 1
            selectors.append((text, matchers))
        i += 1
    return selectors, grouping


def dashboard_queries(path):
    """The PromQL of every panel target, and the metric/label pairs of label_values()."""
    with open(path) as f:
        dash = json.load(f)
    exprs, label_values = [], []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                exprs.append(node["expr"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(dash.get("panels", []))
    for var in dash.get("templating", {}).get("list", []):
        query = var.get("definition") or ""
        m = re.fullmatch(r"\s*label_values\(\s*(.+?)\s*,\s*([A-Za-z_]\w*)\s*\)\s*", query)
        if m:
            label_values.append((m.group(1), m.group(2)))
        elif var.get("type") == "query":
            exprs.append(query)
    return exprs, label_values


def concrete(expr):
    """A dashboard query as Grafana would send it, the variables filled in."""
    return expr.replace("$__rate_interval", "1m").replace("$job", "webhookd")


def get(base, path, params=None):
    url = base + path + ("?" + urllib.parse.urlencode(params, doseq=True) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # 400 carries Prometheus's own explanation
        return json.load(e)


def series(base, selector):
    answer = get(base, "/api/v1/series", {"match[]": selector})
    if answer.get("status") != "success":
        raise RuntimeError(f"{selector}: {answer.get('error')}")
    return answer["data"]


def selector_text(metric, matchers):
    inner = ",".join(f'{label}{op}{json.dumps(value)}' for label, op, value in matchers)
    return f"{metric}{{{inner}}}" if inner else metric


def check_docs(dashboard, alerts, doc):
    problems = []
    with open(doc) as f:
        text = f.read()
    # GitHub's anchors: the heading lower-cased, punctuation dropped, spaces as hyphens.
    anchors = set()
    for heading in re.findall(r"^#+\s+(.*?)\s*$", text, re.M):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    with open(alerts) as f:
        rules_text = f.read()
    for url in re.findall(r"runbook_url:\s*['\"]?([^'\"\s]+)", rules_text):
        path, _, anchor = url.partition("#")
        if not path.endswith("operations.md") or anchor not in anchors:
            problems.append(f"{alerts}: runbook_url {url}: no heading with that anchor in {doc}")
    with open(dashboard) as f:
        names = set(re.findall(r"\bwebhookd_[a-z0-9_]+", f.read() + rules_text))
    for name in sorted(names):
        base = next((name[:-len(s)] for s in HISTOGRAM_SUFFIXES if name.endswith(s)), name)
        if not re.search(rf"\b({name}|{base})\b", text):
            problems.append(f"{name} is used but {doc} does not describe it")
    return problems


def check_series(base, dashboard, alerts, allowed_missing):
    problems, notes = [], []
    # The rules as Prometheus loaded them: their count and their health.
    with open(alerts) as f:
        expected = len(re.findall(r"^\s*-\s+alert:", f.read(), re.M))
    answer = get(base, "/api/v1/rules")
    rules = [r for g in answer["data"]["groups"] for r in g["rules"]]
    if len(rules) != expected:
        problems.append(f"Prometheus loaded {len(rules)} rules, {alerts} has {expected}")
    for r in rules:
        if r.get("health") != "ok":
            problems.append(f"rule {r['name']}: health {r.get('health')} {r.get('lastError', '')}")

    exprs, label_values = dashboard_queries(dashboard)
    for expr in exprs:
        answer = get(base, "/api/v1/query", {"query": concrete(expr)})
        if answer.get("status") != "success":
            problems.append(f"dashboard query fails: {expr}: {answer.get('error')}")

    uses = [(expr, *parse(concrete(expr))) for expr in exprs + [r["query"] for r in rules]]
    uses += [(f"label_values({m}, {label})", *parse(m)[0:1], [label]) for m, label in label_values]
    checked = set()
    for expr, selectors, grouping in uses:
        present = []
        for metric, matchers in selectors:
            key = (metric, tuple(matchers))
            found = series(base, metric)
            if not found:
                if metric in allowed_missing:
                    notes.append(f"allowed to be missing: {metric}")
                else:
                    problems.append(f"no series {metric} (in: {expr})")
                continue
            present.append(found)
            if key in checked:
                continue
            checked.add(key)
            # A label=value selector must select something; a regex one must at least name
            # a label the series have (5xx may rightly be absent).
            equal = [m for m in matchers if m[1] == "=" and "$" not in m[2]]
            if equal and not series(base, selector_text(metric, equal)):
                problems.append(f"no series {selector_text(metric, equal)} (in: {expr})")
            for label, op, value in matchers:
                if op != "=" and not any(label in s for s in found):
                    problems.append(f"{metric} has no label {label} (in: {expr})")
        for label in grouping:
            if present and not any(label in s for found in present for s in found):
                problems.append(f"grouping by {label}, which no series of the query has (in: {expr})")
    return problems, sorted(set(notes))


def main(argv):
    if argv[:1] == ["docs"] and len(argv) == 4:
        problems, notes = check_docs(*argv[1:]), []
    elif argv[:1] == ["series"] and len(argv) in (4, 6):
        allowed = set(argv[5].split(",")) if len(argv) == 6 and argv[4] == "--allow-missing" else set()
        problems, notes = check_series(argv[1].rstrip("/"), argv[2], argv[3], allowed)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for n in notes:
        print(f"note: {n}")
    for p in problems:
        print(f"problem: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
