"""Step 5 of a pass: the scheduler's objects (EPP Service, InferencePools v1 and v1alpha2),
TokenizerReady and SchedulerWorkloadReady."""
