"""Issue 14, defect 2: a RobustBench entry routed through timm loads offline from its checkpoint in
``model_dir`` (RobustBench itself calls ``timm.create_model(..., pretrained=True)``, which downloads)."""

import torch

from robustsuite_common.testing import write_timm_checkpoint
from uncspan import load_robustbench_models


def test_timm_routed_entry_loads_offline_from_model_dir(tmp_path, registered_timm, no_network, robustbench_extra):
    NAME, _ = registered_timm  # noqa: N806
    g = torch.Generator().manual_seed(0)
    ref = write_timm_checkpoint(tmp_path, generator=g)
    models, skipped = load_robustbench_models([NAME], tmp_path)
    assert skipped == {}
    model = models[NAME]
    assert not model.training
    x = torch.rand(4, 3, 8, 8, generator=g)
    with torch.no_grad():
        torch.testing.assert_close(model(x), ref(x))
