"""A discrete operator and its load: the matrix A as a sum of bilinear forms and the vector b as
a sum of loads, each over an element set, assembled on the device by capturable launches.

    op = AssembledOperator(assembler)
    op.add_form("stiffness", cells(space), conductivity)      # A  = K
    op.add_form("mass", facets(space, ["top"]), alpha)        # A += alpha M on the facets
    op.add_load(cells(space), nodal_f)                        # b  = M f
    op.add_load(facets(space, ["right"]), nodal_g)            # b += the facet load of g
    op.assemble_matrix(); op.assemble_load()                  # the launches, in order
    op.values, op.load                                        # A's values (pattern), b

A load reads a device vector of nodal values (`sources`, in the order of the loads), so a time
step can rewrite the data and replay `load_launches`. The first form and the first load write
their targets, later ones add: A's launch list is the forms (later ones into a scratch, added
by fe_axpby), b's the loads in order.
"""

from .system import axpby


class AssembledOperator:
    def __init__(self, assembler):
        self.assembler = a = assembler
        self.space, self.backend, self.dtype = a.space, a.backend, a.dtype
        self.values = a.values()  # A on the space's pattern
        self.load = a.vector()  # b
        self.forms = []
        self.matrix_launches = []
        self.load_launches = []
        self.sources = []  # the device nodal vectors the loads read, in order

    def add_form(self, form, elements, coefficient=1.0):
        """A += the bilinear `form` (a name of assembly.FORMS) over `elements` with a
        coefficient per element; returns its BilinearForm."""
        bilinear = self.assembler.bilinear(form, elements, coefficient)
        if not self.forms:
            self.matrix_launches.append(bilinear.bind(self.values))
        else:
            term = self.assembler.values()
            self.matrix_launches += [bilinear.bind(term),
                                     axpby(self.backend, self.values, 1.0, self.values, 1.0,
                                           term)]
        self.forms.append(bilinear)
        return bilinear

    def add_load(self, elements, host_values, coefficient=1.0):
        """b += the load of the nodal values (interleaved for a vector space) over `elements`,
        times a coefficient per element; returns the device vector of the values."""
        f = self.assembler.device(host_values, self.dtype)
        add = bool(self.load_launches)  # the first load overwrites b
        self.load_launches.append(self.assembler.linear(elements, coefficient).bind(f, self.load,
                                                                                    add))
        self.sources.append(f)
        return f

    def assemble_matrix(self):
        for launch in self.matrix_launches:
            launch()

    def assemble_load(self):
        for launch in self.load_launches:
            launch()
