-- The first schema: devices, commands, events, results and their runs.
CREATE TABLE devices (
	fleet TEXT NOT NULL,
	id TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT '',
	boot_id TEXT NOT NULL DEFAULT '',
	conn_seq INTEGER NOT NULL DEFAULT 0,
	online INTEGER NOT NULL DEFAULT 0,
	info TEXT NOT NULL DEFAULT '{}',
	labels TEXT NOT NULL DEFAULT '{}',
	heartbeat TEXT NOT NULL DEFAULT '',
	busy_cmd TEXT NOT NULL DEFAULT '',
	last_seen INTEGER NOT NULL DEFAULT 0,
	last_result TEXT NOT NULL DEFAULT '',
	last_result_at INTEGER NOT NULL DEFAULT 0,
	updated INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (fleet, id)
);
CREATE TABLE commands (
	id TEXT PRIMARY KEY,
	fleet TEXT NOT NULL,
	target TEXT NOT NULL,
	kind TEXT NOT NULL,
	issued_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	spec TEXT NOT NULL,
	raw BLOB NOT NULL
);
CREATE TABLE events (
	command_id TEXT NOT NULL,
	fleet TEXT NOT NULL,
	device TEXT NOT NULL,
	seq INTEGER NOT NULL,
	state TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	result_id TEXT NOT NULL DEFAULT '',
	progress TEXT NOT NULL DEFAULT '',
	at INTEGER NOT NULL,
	received INTEGER NOT NULL,
	PRIMARY KEY (command_id, fleet, device, seq)
);
CREATE TABLE results (
	id TEXT PRIMARY KEY,
	fleet TEXT NOT NULL,
	device TEXT NOT NULL,
	command_id TEXT NOT NULL DEFAULT '',
	kind TEXT NOT NULL DEFAULT '',
	outcome TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	started INTEGER NOT NULL,
	received INTEGER NOT NULL,
	labels TEXT NOT NULL DEFAULT '{}',
	url TEXT NOT NULL DEFAULT '',
	connections INTEGER NOT NULL DEFAULT 0,
	nruns INTEGER NOT NULL DEFAULT 0,
	board TEXT NOT NULL DEFAULT '',
	cpu_model TEXT NOT NULL DEFAULT '',
	cores INTEGER NOT NULL DEFAULT 0,
	os TEXT NOT NULL DEFAULT '',
	kernel TEXT NOT NULL DEFAULT '',
	arch TEXT NOT NULL DEFAULT '',
	governor TEXT NOT NULL DEFAULT '',
	agent_version TEXT NOT NULL DEFAULT '',
	server TEXT NOT NULL DEFAULT '',
	throttled INTEGER NOT NULL DEFAULT 0,
	raw BLOB NOT NULL
);
CREATE INDEX results_device ON results (fleet, device, started);
CREATE INDEX results_started ON results (started);
CREATE INDEX results_command ON results (command_id);
CREATE TABLE runs (
	result_id TEXT NOT NULL REFERENCES results (id),
	idx INTEGER NOT NULL,
	started INTEGER NOT NULL,
	duration_s REAL NOT NULL,
	completed INTEGER NOT NULL,
	rps REAL NOT NULL,
	mean_us REAL,
	p50_us REAL,
	p99_us REAL,
	max_us REAL,
	timeouts INTEGER NOT NULL,
	errors INTEGER NOT NULL,
	err_connect INTEGER NOT NULL,
	err_read INTEGER NOT NULL,
	err_write INTEGER NOT NULL,
	err_status INTEGER NOT NULL,
	err_length INTEGER NOT NULL,
	cpu_pct REAL,
	cpu_user_pct REAL,
	io_kbs REAL,
	mem_kb REAL,
	cached_kb REAL,
	temp_c REAL,
	throttled INTEGER NOT NULL,
	PRIMARY KEY (result_id, idx)
);
