"""What the tests share and never test themselves: helpers, workloads, reference models and servers. Test
modules import from here (and from tests.conftest), never from one another."""
