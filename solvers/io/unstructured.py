"""Output of runs on unstructured simplex meshes (the finite-element solvers): the run file of
hdf5.RunWriter with the mesh as points and cells and nodal fields, and its XDMF sidecar.

    /mesh/points   (n, dim) float64 node coordinates        attrs: cell_type, ndim
    /mesh/cells    (m, dim + 1) int64 vertex indices of each triangle or tetrahedron
    /fields/<name>, /snapshots/NNNNNN/<name>   nodal values (n,) or (n, components)

write_unstructured_xdmf also writes the sidecar of cell_output's meshes of mixed cell types.
"""

import xml.etree.ElementTree as ET

import numpy as np

from .hdf5 import RunWriter
from .xdmf import write_document

TOPOLOGY = {"triangle": "Triangle", "tetra": "Tetrahedron"}


class UnstructuredRunWriter(RunWriter):
    """RunWriter for a solvers.fe Mesh: fields are nodal, (npoints,) or (npoints, k)."""

    def __init__(self, out_dir, name, mesh, attrs, targets=()):
        super().__init__(out_dir, name, mesh, attrs, targets)
        self.vector_components = ((2,), (3,))

    def _write_mesh(self, group):
        mesh = self.grid
        group.attrs.update({"ndim": mesh.dim, "cell_type": mesh.cell_type})
        group["points"] = mesh.points
        group["cells"] = mesh.cells

    def _stored(self, value, final):
        return value, "node"

    def _write_xdmf(self, xdmf_path, h5_name):
        mesh = self.grid
        topology = ({"TopologyType": TOPOLOGY[mesh.cell_type],
                     "NumberOfElements": str(mesh.ncells)}, mesh.cells.shape)
        return write_unstructured_xdmf(xdmf_path, h5_name, mesh.points.shape, topology,
                                       self.snapshots, self.field_dtypes, self._field_shapes,
                                       "Node")


def _item(parent, dims, number, precision, text):
    item = ET.SubElement(parent, "DataItem", Dimensions=" ".join(map(str, dims)),
                         NumberType=number, Precision=str(precision), Format="HDF")
    item.text = text
    return item


def write_unstructured_xdmf(path, h5_filename, points_shape, topology, snapshots, dtypes,
                            shapes, center):
    """An XDMF 3 temporal collection of the snapshots on an unstructured mesh (atomically).
    points_shape: of /mesh/points, (n, 2) or (n, 3); topology: (the Topology element's XML
    attributes, the shape of /mesh/cells); dtypes, shapes: {field: dtype, shape} of the snapshot
    datasets, whose values are at the mesh's nodes (center "Node") or cells ("Cell")."""
    root = ET.Element("Xdmf", Version="3.0")
    series = ET.SubElement(ET.SubElement(root, "Domain"), "Grid", Name="run",
                           GridType="Collection", CollectionType="Temporal")
    for index, time in snapshots:
        snap = ET.SubElement(series, "Grid", Name=f"snapshot_{index:06d}", GridType="Uniform")
        ET.SubElement(snap, "Time", Value=repr(float(time)))
        _item(ET.SubElement(snap, "Topology", topology[0]), topology[1], "Int", 8,
              f"{h5_filename}:/mesh/cells")
        geometry = ET.SubElement(snap, "Geometry",
                                 GeometryType="XY" if points_shape[1] == 2 else "XYZ")
        _item(geometry, points_shape, "Float", 8, f"{h5_filename}:/mesh/points")
        for name, dtype in dtypes.items():
            shape = shapes[name]
            kind = "Scalar" if len(shape) == 1 else "Vector"
            attribute = ET.SubElement(snap, "Attribute", Name=name, AttributeType=kind,
                                      Center=center)
            _item(attribute, shape, "Float", np.dtype(dtype).itemsize,
                  f"{h5_filename}:/snapshots/{index:06d}/{name}")
    return write_document(path, root)
