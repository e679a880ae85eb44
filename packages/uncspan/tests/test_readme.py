"""The README's code runs as written (tools/dev/readme_blocks.py): every python and bash block in order, in one
namespace and one working directory, with this package alone (no robustsuite import); blocks marked
``<!-- long-benchmark -->`` (wheel builds, the recorded benchmark) are skipped; and it has the one shape."""

from robustsuite_common.testing import readme_tests

test_readme_blocks_run_as_written, test_readme_has_the_one_shape = readme_tests(__file__)
