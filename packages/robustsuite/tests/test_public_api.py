import robustsuite


def test_public_api_is_pinned():
    assert sorted(robustsuite.__all__) == sorted([
        "ConfigError", "Dataset", "DatasetSpecError", "Figure", "ModelSpecError", "RunContext", "Section", "Split",
        "SpecError", "Table", "TextClassifier", "UserDataset", "__version__", "align_labels",
        "load_dataset", "load_model", "predict_logits", "read_samples"])
    for name in robustsuite.__all__:
        assert hasattr(robustsuite, name)


def test_every_runner_module_follows_the_contract():
    from robustsuite import runners

    for name, mod in runners.available().items():
        assert mod.NAME == name and isinstance(mod.TITLE, str) and isinstance(mod.DEFAULTS, dict)
        assert callable(mod.run)
        assert "targets" in mod.DEFAULTS or {"model", "dataset"} <= set(mod.DEFAULTS), name
