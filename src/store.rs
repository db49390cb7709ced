//! The history of runs in an embedded SQLite database (to be written).
