"""CEL rules with the cost kube-apiserver v1.35.4 estimates for them, read from the
apiserver itself: tests/cluster/test_cel_cost_truth.py puts each rule in a CRD whose other
rules bring the schema's total to exactly the per-CRD budget with this cost, which the
apiserver accepts, and one more, which it refuses; tests/apiserver/test_cel_cost.py holds
the estimator to the same numbers offline."""

from __future__ import annotations

from typing import Any

S: dict[str, Any] = {"type": "string"}
NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}},
        "name": S,
        "short": {"type": "string", "maxLength": 10},
        "m": {"type": "object", "additionalProperties": S},
        "n": {"type": "integer"},
        "ios": {"x-kubernetes-int-or-string": True},
        "iosShort": {"x-kubernetes-int-or-string": True, "maxLength": 4},
        "e": {"type": "string", "enum": ["abc", "de"]},
        "d": {"type": "string", "format": "duration"},
        "t": {"type": "string", "format": "date-time"},
        "b": {"type": "string", "format": "byte", "maxLength": 8},
        "objs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["k"],
                "properties": {"k": {"type": "string", "maxLength": 3}, "v": {"type": "integer"}},
            },
        },
        "lol": {
            "type": "array",
            "maxItems": 3,
            "items": {"type": "array", "maxItems": 4, "items": {"type": "integer"}},
        },
        "res": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
    },
}

LONG = "a" * 100
# (rule at NODE, its estimated cost)
ROWS: list[tuple[str, int]] = [
    ("self.name.size() < 10", 4),
    ("self.items.all(x, x.size() < 3)", 63),
    ('self.name.matches("^[a-z]+$")', 629148),
    ("self.n == 1", 2),
    ('self.m.all(k, self.m[k] == "a")', 3145723),
    ("has(self.n)", 1),
    ('self.items.exists_one(x, x == "a")', 44),
    ('self.items.map(x, x + "a").all(y, y.startsWith("a"))', 224),
    ('self.items.all(i, v, v == "a")', 53),
    ('sets.contains(self.items, ["a"])', 23),
    ("self.?n.orValue(1) == 1", 4),
    ('quantity("1").isGreaterThan(quantity(self.name))', 314577),
    ('self.name.split(",").size() > 1', 629150),
    ('self.items.join(",") == ""', 23),
    ("self.short == self.name", 8),
    ('self.e.startsWith("a")', 3),
    ("self.objs.all(o, o.k.size() > 1 && o.v > 2)", 3145723),
    ("self.lol.all(l, l.all(x, x > 0))", 78),
    ("self.objs.exists(o, o.k == 'a')", 2202007),
    ("self.items.filter(x, x.contains('a')).size() < 2", 175),
    ("type(self.ios) == int || self.ios.matches('^[0-9]+%$')", 943725),
    ("type(self.iosShort) == string && self.iosShort.startsWith('1')", 7),
    ("self.d > duration('1s')", 4),
    ("self.t < timestamp('2020-01-01T00:00:00Z')", 4),
    ("self.b.size() < 4", 4),
    ("self.items[0] == 'a'", 4),
    ("self.m['a'] == 'b'", 4),
    ("'a' in self.items", 12),
    ("'a' in self.m", 3),
    ("self.name.lowerAscii() == 'abc'", 314576),
    ("self.name.replace('a', 'bb') != ''", 629148),
    ("self.name.indexOf('a') > 0", 314576),
    ("[1,2,3].all(x, x > 0)", 26),
    ("self.objs.map(o, o.k).exists(k, k == 'x')", 5976882),
    ("isURL(self.name) && url(self.name).getHost() == 'a'", 314580),
    ("self.name.find('[a-z]+') == 'a'", 629149),
    ("self.items.isSorted()", 32),
    ("self.m.exists(k, k.startsWith('a'))", 2359293),
    ("self.items.size() == 0 ? true : self.items[0].endsWith('x')", 8),
    ("string(self.n) == self.name", 314578),
    ("self.name + self.short == 'ab'", 314582),
    ("self.res.kind == 'Pod' && self.res.metadata.name.size() < 5", 10),
    ("self.name == oldSelf.name", 314577),
    ("[].all(x, x)", 11),
    ("{1: 'a'}[1] == 'a'", 32),
    ("optional.none().orValue(1) == 1", 3),
    ("self.m.?a.orValue('') == ''", 4),
    ("self.items[?0].hasValue()", 4),
    ("self.items.transformList(i, v, i > 0, v).size() > 0", 165),
    ("self.n in [1, 2]", 14),
    ("type(self) == map", 3),
    ("self.items.all(x, x in self.items)", 163),
    ("timestamp('2020-01-01T00:00:00Z').getFullYear() > 1", 3),
    ("self.name.charAt(0) == 'a'", 4),
    ("strings.quote(self.name) == ''", 314575),
    ("'%s'.format([self.name]) != ''", 13),
    ("matches(self.name, 'a')", 3),
    ("self.items.sort()[0] == 'a'", 224),
    ("self.items.reverse().size() > 0", 25),
    ("self.items.distinct().size() > 0", 215),
    ("lists.range(5).all(i, i > 0)", 42),
    ("self.items.slice(1, 3).size() > 0", 17),
    ("self.items.slice(0, self.n).size() > 0", 27),
    ("[[1], [2]].flatten().size() > 0", 45),
    ("[[[1]]].flatten(2).size() > 0", 45),
    ("[self.n, 1].sort()[0] > 0", 33),
    # What an index into a literal, or a conditional of literals, gives is sized by the
    # literal's entries (cel-go v0.23+; 1.32 sizes it otherwise: test_cel_cost_truth).
    (f"{{'k': '{LONG}'}}['k'].matches('^a')", 42),
    (f"['{LONG}'][0].matches('^a')", 22),
    (f"(self.n > 0 ? ['{LONG}'] : ['b'])[0].matches('^a')", 25),
    (f"['{LONG}'].exists(x, x.matches('^a'))", 17),
    ("dyn(self.short).matches('^a')", 8),
]


# ROWS the oldest minor's apiserver (1.32) costs otherwise: rule -> its cost there, or None
# where a new rule cannot use the library yet (new rules compile at the compatibility
# version, 1.31: two-variable comprehensions came in 1.32, lists v3 in 1.34).
# cel-go v0.22 (1.32) sizes no container's entries: an index into a literal is sized by the
# path @values (@items) of no path, which the apiserver's estimator walks from its second
# step: the root's (0 here); through dyn() nothing is sized.
COST_ON_OLDEST: dict[str, int | str | None] = {
    "{1: 'a'}[1] == 'a'": 31,
    f"{{'k': '{LONG}'}}['k'].matches('^a')": 32,
    f"['{LONG}'][0].matches('^a')": 12,
    f"(self.n > 0 ? ['{LONG}'] : ['b'])[0].matches('^a')": 15,
    "dyn(self.short).matches('^a')": (
        "estimated rule cost exceeds budget by factor of more than 100x"
    ),
    **dict.fromkeys(
        [
            'self.items.all(i, v, v == "a")',
            "self.items.transformList(i, v, i > 0, v).size() > 0",
            "self.items.sort()[0] == 'a'",
            "self.items.reverse().size() > 0",
            "self.items.distinct().size() > 0",
            "lists.range(5).all(i, i > 0)",
            "self.items.slice(1, 3).size() > 0",
            "self.items.slice(0, self.n).size() > 0",
            "[[1], [2]].flatten().size() > 0",
            "[[[1]]].flatten(2).size() > 0",
            "[self.n, 1].sort()[0] > 0",
        ]
    ),
}
