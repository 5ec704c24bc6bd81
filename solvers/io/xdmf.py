"""XDMF sidecar that lets ParaView (and VisIt) open a run's HDF5 file as a time series.

Every snapshot is a 2DRectMesh grid (VXVY geometry from /mesh/x_nodes, /mesh/y_nodes), or a
3DRectMesh (VXVYVZ, and /mesh/z_nodes) for a 3D grid, with cell-centred attributes read from
/snapshots/NNNNNN/<field>. A 1D run is shown as a strip one cell thick: its y nodes [0, dx] are
written inline, since the HDF5 file has no y axis.
"""

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np


def _data_item(parent, dims, dtype, text, fmt="HDF"):
    item = ET.SubElement(parent, "DataItem", Dimensions=" ".join(str(d) for d in dims),
                         NumberType="Float", Precision=str(np.dtype(dtype).itemsize), Format=fmt)
    item.text = text
    return item


def write_xdmf(path, h5_filename, grid, snapshots, field_names, dtypes=None, components=None):
    """Write an XDMF 3 temporal collection to `path` (atomically).

    h5_filename: the HDF5 file's name relative to `path`'s folder. snapshots: [(index, time)].
    dtypes: {field: numpy dtype} of the snapshot datasets, float64 where not given.
    components: {field: (3,)} for vector fields (stored with a trailing axis of 3 values).
    """
    path = Path(path)
    dtypes, components = dtypes or {}, components or {}
    nx = grid.nx
    ny = grid.ny if grid.ndim >= 2 else 1
    # XDMF lists dimensions slowest first: (ny, nx) cells, matching the snapshot datasets,
    # which are stored transposed (layout "y,x"; 3D: (nz, ny, nx), "z,y,x"). A 1D strip's cells
    # are (1, nx): the XDMF 2 reader needs the topology's rank, and both readers read a (nx,)
    # dataset whole when the ranks differ but the counts agree.
    cell_dims = (grid.nz, ny, nx) if grid.ndim == 3 else (ny, nx)
    topology = "3DRectMesh" if grid.ndim == 3 else "2DRectMesh"
    axes = "xyz"[:max(grid.ndim, 2)]

    root = ET.Element("Xdmf", Version="3.0")
    series = ET.SubElement(ET.SubElement(root, "Domain"), "Grid", Name="run",
                           GridType="Collection", CollectionType="Temporal")
    for index, time in snapshots:
        group = f"/snapshots/{index:06d}"
        snap = ET.SubElement(series, "Grid", Name=f"snapshot_{index:06d}", GridType="Uniform")
        ET.SubElement(snap, "Time", Value=repr(float(time)))
        ET.SubElement(snap, "Topology", TopologyType=topology,
                      Dimensions=" ".join(str(n + 1) for n in cell_dims))
        geometry = ET.SubElement(snap, "Geometry", GeometryType="".join(f"V{a.upper()}"
                                                                        for a in axes))
        for axis, count in zip(axes, reversed(cell_dims)):
            if axis == "y" and grid.ndim == 1:
                _data_item(geometry, (2,), np.float64, f"0 {grid.dx!r}", fmt="XML")
            else:
                _data_item(geometry, (count + 1,), np.float64,
                           f"{h5_filename}:/mesh/{axis}_nodes")
        for name in field_names:
            extra = tuple(components.get(name, ()))
            attribute = ET.SubElement(snap, "Attribute", Name=name,
                                      AttributeType="Vector" if extra else "Scalar",
                                      Center="Cell")
            _data_item(attribute, cell_dims + extra, dtypes.get(name, np.float64),
                       f"{h5_filename}:{group}/{name}")

    return write_document(path, root)


def write_document(path, root):
    """Write an XML tree to `path` atomically (a temporary file renamed); returns path."""
    ET.indent(root)
    text = '<?xml version="1.0" ?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        temp.write_text(text)
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)
        raise
    return path
