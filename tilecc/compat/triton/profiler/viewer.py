"""`triton.profiler.viewer` (`proton-viewer`): read a `.hatchet` profile, derive metrics,
print the tree.  Triton's viewer reads the file with hatchet and pandas; this one needs
neither: a profile is a `Tree` of `Node`s, each with its metrics by column name.

    tree, metrics = parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    print_tree(tree, metrics)          #  990.125 10.232 matmul_kernel [M=8192, ...]
    tree.find("matmul_kernel [M=8192, N=8192, K=512]").metrics["time/ms (inc)"]

    python -m triton.profiler.viewer -m tflop16/s,time/ms matmul.hatchet

The file is JSON: [ROOT frame, device info], a frame being {"frame": {"name"},
"metrics", "children"}.  The metrics the root holds ("time (ns)", "count") are
inclusive: each frame gets "<metric> (inc)", its own plus its descendants'.  The others
(flops8/16/32/64, flops, bytes, ...) are the frame's own.  Metrics asked for are columns
or derived from them, as Triton derives them:

    time/s, time/ms, time/us, time/ns        inclusive time
    avg_time/<unit>                          inclusive time / inclusive count
    cpu_time/<unit>, avg_cpu_time/<unit>     the same of "cpu_time"
    flop[8|16|32|64]/s, gflop../s, tflop../s the frame's flops<width> / inclusive time
    byte/s, gbyte/s, tbyte/s                 the frame's bytes / inclusive time
    util                                     the larger of the flops' and the bytes' time at
                                             the device's peak, over the frame's time
    <metric>/%                               a frame's share of the root's (inclusive) or of
                                             the sum over frames (exclusive)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

from collections import namedtuple

from tilecc.compat.triton.profiler import specs
from tilecc.compat.triton.profiler.recorder import FLOPS_WIDTHS

NAN = float("nan")

# A derived metric's source and its units: name -> seconds, bytes/s or flop/s per unit
FactorDict = namedtuple("FactorDict", ["name", "factor"])
time_factor_dict = FactorDict("time", {"time/s": 1, "time/ms": 1e-3, "time/us": 1e-6,
                                       "time/ns": 1e-9})
avg_time_factor_dict = FactorDict("avg_time", {f"avg_{k}": v for k, v in
                                               time_factor_dict.factor.items()})
cpu_time_factor_dict = FactorDict("cpu_time", {f"cpu_{k}": v for k, v in
                                               time_factor_dict.factor.items()})
avg_cpu_time_factor_dict = FactorDict("avg_cpu_time", {f"avg_{k}": v for k, v in
                                                       cpu_time_factor_dict.factor.items()})
bytes_factor_dict = FactorDict("bytes", {"byte/s": 1, "gbyte/s": 1e9, "tbyte/s": 1e12})
default_flop_factor_dict = {"flop/s": 1, "gflop/s": 1e9, "tflop/s": 1e12}
# the throughputs: metric -> (its source column, its units)
derivable_metrics = {k: bytes_factor_dict for k in bytes_factor_dict.factor}
derivable_metrics.update({k: FactorDict("flops", default_flop_factor_dict)
                          for k in default_flop_factor_dict})
for _width in FLOPS_WIDTHS:
    _units = {f"flop{_width}/s": 1, f"gflop{_width}/s": 1e9, f"tflop{_width}/s": 1e12}
    derivable_metrics.update({k: FactorDict(f"flops{_width}", _units) for k in _units})
_TIMES = {**time_factor_dict.factor, **avg_time_factor_dict.factor,
          **cpu_time_factor_dict.factor, **avg_cpu_time_factor_dict.factor}
_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


class Node:
    """One frame: its name, its metrics by column ("time (ns)", "time (ns) (inc)",
    "tflop16/s (inc)"...), its children."""

    def __init__(self, name: str, metrics: dict, parent: "Node | None" = None):
        self.name, self.metrics, self.parent = name, dict(metrics), parent
        self.children: list[Node] = []

    def value(self, column: str) -> float:
        """A column's number (NaN where the frame has none)."""
        return _value(self, column)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {len(self.children)} children)"


class Tree:
    """A profile: its root frames, which columns are inclusive, the devices' facts."""

    def __init__(self, roots: list[Node], inclusive: list[str], exclusive: list[str],
                 device_info: dict):
        self.roots, self.inclusive, self.exclusive = roots, inclusive, exclusive
        self.device_info = device_info

    def nodes(self) -> list[Node]:
        return [n for root in self.roots for n in root.walk()]

    def find(self, name: str) -> Node | None:
        """The first frame of that name (depth first)."""
        return next((n for n in self.nodes() if n.name == name), None)


# --- reading -----------------------------------------------------------------------------------

def remove_frames(database):
    """The root frames of a profile without the frames that hold nothing."""
    return [f for f in (_prune(frame) for frame in database) if f is not None]


def _prune(frame: dict) -> dict | None:
    """Triton's viewer drops frames without metrics or children (and its own metadata
    frames): a frame whose children all go goes too."""
    if frame["frame"]["name"] == "__proton_launch_metadata":
        return None
    children = frame.get("children", [])
    if not frame.get("metrics") and not children:
        return None
    kept = [c for c in (_prune(c) for c in children) if c is not None]
    if children and not kept:
        return None
    return {**frame, "children": kept}


def _build(frame: dict, parent: Node | None) -> Node:
    node = Node(frame["frame"]["name"], frame.get("metrics", {}), parent)
    node.children = [_build(c, node) for c in frame.get("children", [])]
    return node


def get_raw_metrics(file):
    """(tree, inclusive metrics, exclusive metrics, device info) of an open `.hatchet`
    file; the inclusive columns "<metric> (inc)" computed."""
    database = json.load(file)
    if not isinstance(database, list) or not database or not isinstance(database[0], dict):
        raise ValueError(f"{getattr(file, 'name', 'the file')}: not a proton profile (a "
                         "JSON list [ROOT frame, device info])")
    device_info = database[1] if len(database) > 1 else {}
    roots = [_build(f, None) for f in remove_frames(database[:1])]
    inclusive = [k for root in roots for k, v in root.metrics.items() if _number(v)]
    columns: list[str] = []
    for root in roots:
        for node in root.walk():
            columns += [k for k in node.metrics if k not in columns and k not in inclusive]
    for root in roots:
        for name in inclusive:
            _sum_inclusive(root, name)
    return Tree(roots, inclusive, columns, device_info), inclusive, columns, device_info


def read(filename):
    """`get_raw_metrics` of a file by name."""
    with open(filename) as f:
        tree, inclusive, exclusive, device_info = get_raw_metrics(f)
    if not inclusive + exclusive:
        raise ValueError(f"{filename}: no metrics found in the profile")
    return tree, inclusive, exclusive, device_info


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _sum_inclusive(node: Node, name: str) -> float:
    own = node.metrics.get(name)
    total = (own if _number(own) else 0) + sum(_sum_inclusive(c, name) for c in node.children)
    node.metrics[f"{name} (inc)"] = total
    return total


def _value(node: Node, column: str) -> float:
    value = node.metrics.get(column)
    return float(value) if _number(value) else NAN


# --- deriving ----------------------------------------------------------------------------------

def match_available_metrics(metrics, inclusive_metrics, exclusive_metrics):
    """The columns of metrics named with or without their unit, any case ("time" is
    "time (ns)"); an inclusive one as "<column> (inc)"."""
    found = []
    for metric in metrics if isinstance(metrics, list) else [metrics]:
        metric = metric.lower()
        for raw in inclusive_metrics + exclusive_metrics:
            if metric in (raw, raw.split("(")[0].strip().lower()):
                found.append(raw + (" (inc)" if raw in inclusive_metrics else ""))
                break
        else:
            raise RuntimeError(f"Metric {metric} is not found. Use the --list flag to list "
                               "available metrics")
    return found


def _seconds(tree: Tree, node: Node, which: str) -> float:
    """A frame's inclusive `which` ("time", "cpu_time") in seconds."""
    column = match_available_metrics(which, tree.inclusive, tree.exclusive)[0]
    unit = column.split("(")[1].split(")")[0]
    return _value(node, column) * _UNIT_SECONDS[unit]


def derive_metrics(gf, metrics, inclusive_metrics, exclusive_metrics, device_info):
    """Add the columns of `metrics` (see the module docstring) to every frame of `gf`;
    their names ("time/ms (inc)", "util", "bytes"...)."""
    nodes = gf.nodes()
    derived = []
    for metric in metrics:
        if metric == "util":
            flops_time = get_min_time_flops(gf, device_info)
            bytes_time = get_min_time_bytes(gf, device_info)
            for node, f, b in zip(nodes, flops_time, bytes_time):
                known = node.metrics.get("device_id") is not None
                node.metrics["util"] = _ratio(max(f, b), _seconds(gf, node, "time")) \
                    if known else NAN
            derived.append("util")
        elif metric in derivable_metrics:
            source, units = derivable_metrics[metric]
            column = match_available_metrics(source, gf.inclusive, gf.exclusive)[0]
            for node in nodes:
                node.metrics[f"{metric} (inc)"] = _ratio(
                    _value(node, column), _seconds(gf, node, "time") * units[metric])
            derived.append(f"{metric} (inc)")
        elif metric in _TIMES:
            source = "cpu_time" if "cpu_time" in metric else "time"
            for node in nodes:
                seconds = _seconds(gf, node, source)
                if metric.startswith("avg_"):
                    seconds = _ratio(seconds, _value(node, "count (inc)"))
                node.metrics[f"{metric} (inc)"] = seconds / _TIMES[metric]
            derived.append(f"{metric} (inc)")
        elif "/" in metric:
            name, unit = metric.split("/", 1)
            if unit != "%":
                raise ValueError(f"Unsupported unit {unit}")
            column = match_available_metrics(name, gf.inclusive, gf.exclusive)[0]
            inclusive = column.endswith("(inc)")
            total = _value(nodes[0], column) if inclusive else \
                math.fsum(v for v in (_value(n, column) for n in nodes) if not math.isnan(v))
            out = metric + (" (inc)" if inclusive else "")
            for node in nodes:
                node.metrics[out] = _ratio(_value(node, column), total) * 100.0
            derived.append(out)
        else:
            derived.append(match_available_metrics(metric, gf.inclusive, gf.exclusive)[0])
    return derived


def _ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(b) else NAN


def _device_facts(node: Node, device_info) -> tuple[str, dict] | None:
    device = node.metrics.get("device_id")
    kind = node.metrics.get("device_type", "CUDA")
    facts = (device_info or {}).get(kind, {}).get(str(device)) if device is not None else None
    return (kind, facts) if facts is not None else None


def get_min_time_flops(df, device_info):
    """Per frame of the tree `df` (in `nodes()` order): the seconds its flops<width>
    take at the device's peak (0 where unknown)."""
    out = []
    for node in df.nodes():
        found, seconds = _device_facts(node, device_info), 0.0
        if found is not None:
            kind, facts = found
            for width in FLOPS_WIDTHS:
                flops = _value(node, f"flops{width}")
                if not math.isnan(flops):
                    seconds += flops / specs.max_flops(kind, str(facts["arch"]), width,
                                                       facts["num_sms"], facts["clock_rate"])
        out.append(seconds)
    return out


def get_min_time_bytes(df, device_info):
    """Per frame of the tree `df`: the seconds its bytes take at the device's peak
    bandwidth (0 where unknown)."""
    out = []
    for node in df.nodes():
        found, seconds = _device_facts(node, device_info), 0.0
        moved = _value(node, "bytes")
        if found is not None and not math.isnan(moved):
            kind, facts = found
            seconds = moved / specs.max_bps(kind, str(facts["arch"]), facts["bus_width"],
                                            facts["memory_clock_rate"])
        out.append(seconds)
    return out


# --- filtering and printing --------------------------------------------------------------------

def format_frames(gf, format):
    """Shorten frame names: file_function_line, function_line, file_function."""
    for node in gf.nodes():
        if format == "file_function_line":
            node.name = node.name.split("/")[-1]
        elif format == "function_line":
            node.name = node.name.split(":")[-1]
        elif format == "file_function":
            node.name = (f"{node.name.split('/')[-1].split(':')[0]}@"
                         f"{node.name.split('@')[-1].split(':')[0]}")
    return gf


def filter_frames(gf, include=None, exclude=None, threshold=None, metric=None):
    """Keep the paths through frames whose names match `include` (a regular
    expression); drop frames matching `exclude` with what is below them, and frames
    whose `metric` is under `threshold`."""
    def keep(node: Node, matched: bool) -> Node | None:
        if exclude and re.match(exclude, node.name):
            return None
        if threshold is not None and metric and not _value(node, metric) >= threshold:
            return None
        here = matched or bool(include and re.match(include, node.name))
        node.children = [c for c in (keep(c, here) for c in node.children) if c is not None]
        if include and not here and not node.children and node.parent is not None:
            return None
        return node
    gf.roots = [r for r in (keep(r, not include) for r in gf.roots) if r is not None]
    return gf


def parse(metrics, filename, include=None, exclude=None, threshold=None):
    """(tree, the names of the metrics' columns): read, derive, filter (on the first
    metric)."""
    tree, inclusive, exclusive, device_info = read(filename)
    names = derive_metrics(tree, metrics, inclusive, exclusive, device_info)
    return filter_frames(tree, include, exclude, threshold, names[0]), names


def apply_diff_profile(gf, derived_metrics, diff_file, metrics, include, exclude, threshold):
    """`gf` less the profile in `diff_file` (parsed the same way), frame by frame (by
    path), in the derived metrics; frames only `gf` has keep their values."""
    other, _ = parse(metrics, diff_file, include, exclude, threshold)
    by_path = {path: node for path, node in _paths(other)}
    for path, node in _paths(gf):
        match = by_path.get(path)
        for column in derived_metrics:
            theirs = _value(match, column) if match is not None else NAN
            if not math.isnan(theirs):
                node.metrics[column] = _value(node, column) - theirs
    return gf


def _paths(tree: Tree):
    def walk(node: Node, prefix: tuple):
        here = prefix + (node.name,)
        yield here, node
        for child in node.children:
            yield from walk(child, here)
    for root in tree.roots:
        yield from walk(root, ())


def _show(value) -> str:
    return f"{value:.3f}" if _number(value) else str(value)


def render(tree: Tree, metrics, depth: int = 100) -> str:
    lines = []

    def visit(node: Node, lead: str, branch: str, level: int):
        values = " ".join(_show(node.metrics.get(m, NAN)) for m in metrics)
        lines.append(f"{lead}{branch}{values} {node.name}")
        if level + 1 >= depth:
            return
        below = lead + ("" if not branch else "│  " if branch == "├─ " else "   ")
        for i, child in enumerate(node.children):
            visit(child, below, "└─ " if i == len(node.children) - 1 else "├─ ", level + 1)
    for root in tree.roots:
        visit(root, "", "", 0)
    return "\n".join(lines) + "\n"


def print_tree(gf, metrics, depth=100, format=None, print_sorted=False):
    """Print the tree with the metrics' values before each frame's name."""
    tree = format_frames(gf, format)
    print(render(tree, metrics, depth))
    if print_sorted:
        print("Sorted kernels by metric " + metrics[0])
        nodes = sorted(tree.nodes()[1:], key=lambda n: _value(n, metrics[0]), reverse=True)
        for node in nodes:
            name = node.name[:100] + "..." if len(node.name) > 100 else node.name
            print(f"{name:105} {_value(node, metrics[0]):.4}")
    emit_warnings(tree, metrics)


def emit_warnings(gf, metrics):
    if "bytes (inc)" in metrics and any(_value(n, "bytes (inc)") < 0 for n in gf.nodes()):
        print("Warning: Negative byte values detected, this is usually the result of a "
              "datatype overflow\n")


def show_metrics(file_name):
    _, inclusive, exclusive, _ = read(file_name)
    print("Available inclusive metrics:")
    for raw in inclusive:
        print(f"- {raw.split('(')[0].strip().lower()}")
    print("Available exclusive metrics:")
    for raw in exclusive:
        print(f"- {raw.split('(')[0].strip().lower()}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Performance data viewer for proton "
                                     "profiles (tilecc's, without hatchet).")
    parser.add_argument("-l", "--list", action="store_true", help="list available metrics")
    parser.add_argument("-m", "--metrics", type=str, default=None,
                        help="metrics to show, comma-separated (time/ms, tflop16/s, ...)")
    parser.add_argument("-i", "--include", type=str, default=None)
    parser.add_argument("-e", "--exclude", type=str, default=None)
    parser.add_argument("-t", "--threshold", type=float, default=None)
    parser.add_argument("-d", "--depth", type=int, default=100)
    parser.add_argument("-f", "--format", type=str, default="full",
                        choices=["full", "file_function_line", "function_line",
                                 "file_function"])
    parser.add_argument("--print-sorted", action="store_true", default=False)
    parser.add_argument("--diff-profile", "-diff", type=str, default=None,
                        help="subtract this profile's metrics from the file's")
    parser.add_argument("file")
    args = parser.parse_args(argv)
    if args.include and args.exclude:
        raise ValueError("Cannot specify both include and exclude")
    if args.list:
        show_metrics(args.file)
    elif args.metrics:
        metrics = args.metrics.split(",")
        tree, names = parse(metrics, args.file, args.include, args.exclude, args.threshold)
        if args.diff_profile:
            tree = apply_diff_profile(tree, names, args.diff_profile, metrics, args.include,
                                      args.exclude, args.threshold)
        print_tree(tree, names, args.depth, args.format, args.print_sorted)


if __name__ == "__main__":
    sys.exit(main())
