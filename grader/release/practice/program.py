"""The copy's models as files: a graph of torch operations and its weights, in one
safetensors file, and back to a module to call.

A torch.export program holds this graph too, but loading one imports torch's whole
export machinery (torch._dynamo with it): about 2 s before the first program, and
0.4 to 1 s for each, in every grade a learner runs in a copy. A graph written as
a list of operations loads in milliseconds with torch.fx alone. What it holds is
what the program's graph holds, and no more: each node's operation, its inputs and
its constants, never a line of Python source, a stack trace or a path. Loading one
runs no code from the file: an operation is looked up among torch's own
(`torch.ops.<namespace>.<op>.<overload>`) or a fixed set of Python's operators on
sizes.
"""

from __future__ import annotations

import json
import keyword
import math
import operator
from collections.abc import Iterator
from typing import Any

import torch
import torch.fx

from grader.locale import tr

FORMAT = "gpt-kata-graph/1"
# The operators an exported graph applies to sizes (a length plus a cache's length,
# two sizes compared for a runtime check), and torch's functions of sizes; nothing else
# is looked up in Python.
SIZE_OPERATORS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg",
                            "eq", "ne", "lt", "le", "gt", "ge", "getitem"})
SIZE_FUNCTIONS = frozenset({"sym_max", "sym_min", "sym_float", "sym_int", "sym_not"})


def graph_bytes(program: Any) -> bytes:
    """An exported program's module (`program.module()`) written as a graph and its
    weights. Raises TypeError for what the format cannot say, naming the node."""
    from safetensors.torch import save

    module = program.module()
    # What the exported module takes and gives back, flattened in its graph.
    in_spec, out_spec = (module.graph._codegen.pytree_info.in_spec,
                         module.graph._codegen.pytree_info.out_spec)
    parameters = dict(module.named_parameters())
    tensors: dict[str, torch.Tensor] = {}
    nodes: list[dict[str, Any]] = []
    placeholders: list[str] = []
    output: Any = None
    for node in module.graph.nodes:
        if node.op == "placeholder":
            placeholders.append(node.name)
        elif node.op == "call_module":
            # The input guards torch.export calls first (_guards_fn): the copy's model
            # checks its inputs itself (codec.py), with the kata's model's messages.
            if node.users:
                raise TypeError(f"node {node.name}: a call of module {node.target} is used")
        elif node.op == "get_attr":
            value = (parameters[node.target] if node.target in parameters
                     else module.get_buffer(node.target))
            tensors[node.target] = value.detach().contiguous()
            nodes.append({"name": node.name, "op": "get_attr", "target": node.target,
                          "parameter": node.target in parameters})
        elif node.op == "call_function":
            nodes.append({"name": node.name, "op": "call_function", "target": target_name(node),
                          "args": encoded(node.args, node),
                          "kwargs": {key: encoded(value, node)
                                     for key, value in node.kwargs.items()}})
        elif node.op == "output":
            output = structure(out_spec, iter(encoded(list(node.args[0]), node)))
        else:
            raise TypeError(f"node {node.name}: {node.op} is not a graph operation")
    arguments, keywords = children(in_spec)
    if keywords.num_leaves:
        raise TypeError("a program that takes keyword arguments cannot be written")
    names = iter(placeholders)
    graph = {"format": FORMAT,
             "inputs": [structure(spec, names) for spec in children(arguments)],
             "nodes": nodes, "output": output}
    # One key: safetensors writes its metadata in no fixed order, and two releases must
    # write the same bytes.
    return save(tensors, metadata={"graph": json.dumps(graph, separators=(",", ":"))})


def target_name(node: Any) -> str:
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.linear.default: namespace, operation, overload
    name = getattr(target, "__name__", "")
    if getattr(target, "__module__", None) in ("_operator", "operator") and (
            name in SIZE_OPERATORS):
        return f"operator.{name}"
    if name in SIZE_FUNCTIONS and getattr(torch, name, None) is target:
        return f"torch.{name}"
    raise TypeError(f"node {node.name}: {target!r} is not a torch operation")


def encoded(value: Any, node: Any) -> Any:
    """A node's argument as JSON: other nodes by name, dtypes and devices tagged."""
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": str(value)}
    if isinstance(value, (list, tuple)):
        return [encoded(item, node) for item in value]
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    raise TypeError(f"node {node.name}: cannot write an argument of type "
                    f"{type(value).__name__}")


def structure(spec: Any, leaves: Iterator[Any]) -> Any:
    """A tree spec (the exported module's inputs or outputs) as JSON, its leaves taken
    in order from `leaves`."""
    if spec.is_leaf():
        return next(leaves)
    if spec.type not in (tuple, list):
        raise TypeError(f"a value of type {spec.type.__name__} cannot be written")
    return {spec.type.__name__: [structure(child, leaves) for child in children(spec)]}


def children(spec: Any) -> list[Any]:
    # children() where torch has it; children_specs, older, warns there.
    return list(spec.children()) if hasattr(spec, "children") else spec.children_specs


class ModelFileError(ValueError):
    """A model file the copy cannot read, said in one line: the grade shows it, not a
    traceback from inside the loader."""


def read_graph(path: Any) -> torch.fx.GraphModule:
    """The module a file of graph_bytes holds, called with what the exported module
    took (a tensor, or a tensor and a cache: a list of (keys, values) pairs) and giving
    back what it gave, with its parameters by their names in the order it gave them.
    ModelFileError for a file it cannot read (cut short, edited, of another format)."""
    try:
        return built(path)
    except ModelFileError:
        raise
    except Exception as error:  # noqa: BLE001 - whatever a damaged file makes fail
        raise ModelFileError(tr("{path} is damaged ({error}): take it again from the copy "
                                "you were given", path=path,
                                error=f"{type(error).__name__}: {error}")) from error


def built(path: Any) -> torch.fx.GraphModule:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as file:
        data = json.loads((file.metadata() or {}).get("graph", "{}"))
        if data.get("format") != FORMAT:
            raise ModelFileError(tr("{path} is not a model of this copy's format ({format})",
                                    path=path, format=FORMAT))
        # Copied into memory of torch's own: a tensor read in place lies at the file's
        # alignment, and the matrix kernels of some CPUs then sum in another order,
        # which changes the last bits of a result.
        tensors = {name: file.get_tensor(name).clone() for name in file.keys()}  # noqa: SIM118
    root = torch.nn.Module()
    graph = torch.fx.Graph()
    made: dict[str, torch.fx.Node] = {}

    def decoded(value: Any) -> Any:
        if isinstance(value, list):
            return [decoded(item) for item in value]
        if not isinstance(value, dict):
            return value
        (tag, held), = value.items()
        if tag == "node":
            return made[held]
        if tag in ("tuple", "list"):
            items = [decoded(item) for item in held]
            return tuple(items) if tag == "tuple" else items
        return {"float": float, "dtype": dtype, "device": torch.device}[tag](held)

    # torch.fx writes the graph as Python source and runs it: an input's name, a
    # keyword's or an attribute's goes into that source as it is, so each must be a
    # plain name, else a file could run code of its own.
    for index, shape in enumerate(data["inputs"]):
        if isinstance(shape, str):
            made[shape] = graph.placeholder(plain(shape))
        else:  # a cache: its tensors taken apart in the graph itself
            unpack(graph, graph.placeholder(f"input_{index}"), shape, made)
    for entry in data["nodes"]:
        name, target = entry["name"], entry["target"]
        if entry["op"] == "get_attr":
            for part in target.split("."):
                if not (part.isascii() and part.isdigit()):  # blocks.0.attn: an index
                    plain(part)
            place_tensor(root, target, tensors[target], entry["parameter"])
            made[name] = graph.get_attr(target)
        elif entry["op"] == "call_function":
            made[name] = graph.create_node(
                "call_function", operation(target), tuple(decoded(entry["args"])),
                {plain(key): decoded(value) for key, value in entry["kwargs"].items()},
                name=name)
        else:
            raise ValueError(f"{entry['op']} is not a graph operation")
    graph.output(decoded(data["output"]))
    return torch.fx.GraphModule(root, graph)


def plain(name: Any) -> str:
    """`name` if it is a plain Python name, else ValueError."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a name a graph holds")
    return name


def dtype(name: str) -> torch.dtype:
    found = getattr(torch, name, None)
    if not isinstance(found, torch.dtype):
        raise ValueError(f"{name} is not a torch dtype")
    return found


def unpack(graph: torch.fx.Graph, value: torch.fx.Node, shape: Any,
           made: dict[str, torch.fx.Node]) -> None:
    (_, items), = shape.items()
    for index, item in enumerate(items):
        if isinstance(item, str):
            made[item] = graph.create_node("call_function", operator.getitem, (value, index),
                                           name=item)
        else:
            unpack(graph, graph.call_function(operator.getitem, (value, index)), item, made)


def operation(name: str) -> Any:
    """A node's operation by the name graph_bytes wrote: torch's own, or a size
    operator."""
    namespace, _, rest = name.partition(".")
    if namespace in ("operator", "torch"):
        if rest not in (SIZE_OPERATORS if namespace == "operator" else SIZE_FUNCTIONS):
            raise ValueError(f"{name} is not an operation this copy runs")
        return getattr(operator if namespace == "operator" else torch, rest)
    op, _, overload = rest.partition(".")
    try:
        found = getattr(getattr(getattr(torch.ops, plain(namespace)), plain(op)),
                        plain(overload))
    except (AttributeError, RuntimeError) as error:
        raise ModelFileError(tr("torch {version} has no operation {name}, which this "
                                "copy's models use: install a newer torch",
                                version=torch.__version__, name=name)) from error
    # torch.ops has attributes of its own (load_library, import_module): only an
    # operation's overload, as graph_bytes wrote, is run.
    if not isinstance(found, torch._ops.OpOverload):
        raise ValueError(f"{name} is not an operation this copy runs")
    return found


def place_tensor(root: torch.nn.Module, target: str, tensor: torch.Tensor,
                 parameter: bool) -> None:
    *path, field = target.split(".")
    module = root
    for part in path:
        if not hasattr(module, part):
            module.add_module(part, torch.nn.Module())
        module = getattr(module, part)
    if parameter:
        module.register_parameter(field, torch.nn.Parameter(tensor))
    else:
        module.register_buffer(field, tensor)
