"""The world a pass sees and what it writes: the snapshot and its reader, the configuration snapshots,
create/update/delete decisions on managed objects, and the service's status conditions."""
