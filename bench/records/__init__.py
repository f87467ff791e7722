"""Records: the run-record contract (record, schema/) and its storage: reading a
data folder (history), publishing to the data branch (store)."""
