"""Step 4 of a pass: the service's spec merged with its LLMInferenceServiceConfigs as KServe merges it
(well-known presets, ``spec.baseRefs``), adjusted and validated."""
