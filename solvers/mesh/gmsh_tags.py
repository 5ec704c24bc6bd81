"""A check that meshio does not make: every node tag an element of a Gmsh file names is one of
the file's node tags (which start at 1).

meshio's MSH 2.2 reader turns node tag t into index t - 1 and looks that up in a table, so an
element naming node tag 0 (or a negative tag) silently gets the last node(s) of the table; its
readers fail with an IndexError that names no element when a tag is beyond the largest node
tag. `bad_node_tag` reads the node tags of the $Nodes section and the elements of the $Elements
section of a .msh file (2.2 or 4.1, ASCII or binary, little-endian as meshio reads them) and
says which element block and element name an undefined tag. It answers None for anything it
cannot parse: meshio then reads the file and reports what is wrong with it.
"""

import warnings

import numpy as np

# Nodes per element of the Gmsh element types (meshio's table of the usual ones); a type not
# here ends the scan (None).
GMSH_NODES = {1: 2, 2: 3, 3: 4, 4: 4, 5: 8, 6: 6, 7: 5, 8: 3, 9: 6, 10: 9, 11: 10, 12: 27,
              13: 18, 14: 14, 15: 1, 16: 8, 17: 20, 18: 15, 19: 13, 21: 10, 23: 15, 25: 21,
              26: 4, 27: 5, 28: 6, 29: 20, 30: 35, 31: 56}


class _Unparsed(Exception):
    """The file is not what this scan understands: leave it to meshio."""


def _numbers(text):
    """The whitespace-separated numbers of an ASCII section, as float64 (tags below 2^53 are
    exact)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return np.fromstring(text, sep=" ")


class _Reader:
    """Sequential reads of a section: ASCII numbers or little-endian binary values."""

    def __init__(self, data, start, end, binary, size):
        self.binary, self.data, self.position = binary, data, start
        if not binary:
            self.data, self.position = _numbers(data[start:end].decode("ascii")), 0
        self.types = {"int": np.dtype("<i4"), "size": np.dtype(f"<u{size}"),
                      "real": np.dtype("<f8")}

    def read(self, kind, count):
        """count values (int64; reals as read) of kind 'int', 'size' or 'real'."""
        start = self.position
        if count < 0:
            raise _Unparsed
        if self.binary:
            dtype = self.types[kind]
            values = np.frombuffer(self.data, dtype, count, start)
            self.position += dtype.itemsize * count
        else:
            self.position += count
            if self.position > self.data.size:
                raise _Unparsed
            values = self.data[start:self.position]
        return values if kind == "real" else values.astype(np.int64)


def _check(defined, block, gmsh_type, rows):
    """The message for the first row (element tag, node tags...) naming an undefined tag."""
    bad = ~np.isin(rows[:, 1:], defined)
    if not bad.any():
        return None
    row = int(np.argmax(bad.any(axis=1)))
    tag = int(rows[row, 1:][bad[row]][0])
    why = "Gmsh node tags start at 1" if tag < 1 else "the file defines no such node"
    return (f"element block {block} (Gmsh element type {gmsh_type}), element "
            f"{int(rows[row, 0])} refers to node tag {tag}; {why}")


def _scan_22(data, nodes, elements, binary):
    count_end = data.index(b"\n", nodes)
    count = int(data[nodes:count_end])
    if binary:  # records: int32 tag, 3 float64 coordinates
        records = np.frombuffer(data, np.dtype([("tag", "<i4"), ("x", "<f8", 3)]), count,
                                count_end + 1)
        defined = records["tag"].astype(np.int64)
    else:
        defined = _numbers(data[count_end + 1:data.index(b"$EndNodes", nodes)].decode())
        defined = defined.reshape(count, 4)[:, 0].astype(np.int64)
    count_end = data.index(b"\n", elements)
    count, position = int(data[elements:count_end]), count_end + 1
    if not binary:
        text = data[position:data.index(b"$EndElements", position)].decode()
        block, previous = -1, None
        for line in text.splitlines()[:count]:
            parts = [int(p) for p in line.split()]
            if parts[1] not in GMSH_NODES:
                return None
            if parts[1] != previous:
                block, previous = block + 1, parts[1]
            row = np.array([parts[:1] + parts[3 + parts[2]:]])
            found = _check(defined, block, parts[1], row)
            if found:
                return found
        return None
    done, block = 0, 0
    while done < count:
        gmsh_type, number, tags = (int(v) for v in np.frombuffer(data, "<i4", 3, position))
        position += 12
        if gmsh_type not in GMSH_NODES or number < 1 or tags < 0:
            return None
        width = 1 + tags + GMSH_NODES[gmsh_type]
        rows = np.frombuffer(data, "<i4", number * width, position).reshape(number, width)
        position += 4 * number * width
        found = _check(defined, block, gmsh_type,
                       np.concatenate([rows[:, :1], rows[:, 1 + tags:]], axis=1))
        if found:
            return found
        done, block = done + number, block + 1
    return None


def _scan_41(data, nodes, elements, binary, size):
    read = _Reader(data, nodes, data.find(b"$EndNodes", nodes), binary, size).read
    blocks = int(read("size", 4)[0])
    defined = []
    for _ in range(blocks):
        _, _, parametric = read("int", 3)
        number = int(read("size", 1)[0])
        if parametric:
            return None  # meshio does not read these either
        defined.append(read("size", number))
        read("real", 3 * number)
    defined = np.concatenate(defined) if defined else np.zeros(0, np.int64)
    read = _Reader(data, elements, data.find(b"$EndElements", elements), binary, size).read
    blocks = int(read("size", 4)[0])
    for block in range(blocks):
        _, _, gmsh_type = (int(v) for v in read("int", 3))
        number = int(read("size", 1)[0])
        if gmsh_type not in GMSH_NODES:
            return None
        width = 1 + GMSH_NODES[gmsh_type]
        found = _check(defined, block, gmsh_type, read("size", number * width)
                       .reshape(number, width))
        if found:
            return found
    return None


def _section(data, name, after=0):
    """The offset of the line after `$name`."""
    start = data.index(b"$" + name.encode(), after) + 1 + len(name)
    return data.index(b"\n", start) + 1


def bad_node_tag(path):
    """A description of the first element naming a node tag that the Gmsh file does not define,
    else None (also for files that are not Gmsh or cannot be parsed here)."""
    try:
        data = open(path, "rb").read()
        head = _section(data, "MeshFormat")
        version, binary, size = data[head:data.index(b"\n", head)].split()[:3]
        binary, size = int(binary) == 1, int(size)
        nodes = _section(data, "Nodes")
        elements = _section(data, "Elements", nodes)
        if version.startswith(b"2"):
            return _scan_22(data, nodes, elements, binary)
        if version.startswith(b"4"):
            return _scan_41(data, nodes, elements, binary, size)
    except Exception:  # any parse failure: leave the file to meshio
        return None
    return None
