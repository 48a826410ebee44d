-- The schema of SQLite's migrations 1 to 3 in PostgreSQL's types. Text
-- that is sorted or compared by range is in the "C" collation: byte order,
-- as SQLite compares, whatever the database's locale. Times are ns since
-- the Unix epoch, and integers 64-bit, as in SQLite (a device may send a
-- count that does not fit 32 bits).
CREATE TABLE devices (
	fleet TEXT COLLATE "C" NOT NULL,
	id TEXT COLLATE "C" NOT NULL,
	state TEXT NOT NULL DEFAULT '',
	boot_id TEXT NOT NULL DEFAULT '',
	conn_seq BIGINT NOT NULL DEFAULT 0,
	online BOOLEAN NOT NULL DEFAULT false,
	info TEXT NOT NULL DEFAULT '{}',
	labels TEXT NOT NULL DEFAULT '{}',
	heartbeat TEXT NOT NULL DEFAULT '',
	heartbeat_at BIGINT NOT NULL DEFAULT 0,
	busy_cmd TEXT NOT NULL DEFAULT '',
	last_seen BIGINT NOT NULL DEFAULT 0,
	last_result TEXT NOT NULL DEFAULT '',
	last_result_at BIGINT NOT NULL DEFAULT 0,
	updated BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (fleet, id)
);
CREATE TABLE commands (
	id TEXT COLLATE "C" PRIMARY KEY,
	fleet TEXT NOT NULL,
	target TEXT NOT NULL,
	kind TEXT NOT NULL,
	issued_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	spec TEXT NOT NULL,
	raw BYTEA NOT NULL
);
CREATE INDEX commands_issued ON commands (issued_at);
CREATE TABLE events (
	command_id TEXT COLLATE "C" NOT NULL,
	fleet TEXT COLLATE "C" NOT NULL,
	device TEXT COLLATE "C" NOT NULL,
	seq BIGINT NOT NULL,
	state TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	result_id TEXT NOT NULL DEFAULT '',
	progress TEXT NOT NULL DEFAULT '',
	at BIGINT NOT NULL,
	received BIGINT NOT NULL,
	PRIMARY KEY (command_id, fleet, device, seq)
);
CREATE INDEX events_at ON events (at);
CREATE TABLE results (
	id TEXT COLLATE "C" PRIMARY KEY,
	fleet TEXT COLLATE "C" NOT NULL,
	device TEXT COLLATE "C" NOT NULL,
	command_id TEXT COLLATE "C" NOT NULL DEFAULT '',
	kind TEXT NOT NULL DEFAULT '',
	outcome TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	started BIGINT NOT NULL,
	received BIGINT NOT NULL,
	labels TEXT NOT NULL DEFAULT '{}',
	url TEXT COLLATE "C" NOT NULL DEFAULT '',
	connections BIGINT NOT NULL DEFAULT 0,
	nruns BIGINT NOT NULL DEFAULT 0,
	board TEXT COLLATE "C" NOT NULL DEFAULT '',
	cpu_model TEXT COLLATE "C" NOT NULL DEFAULT '',
	cores BIGINT NOT NULL DEFAULT 0,
	os TEXT COLLATE "C" NOT NULL DEFAULT '',
	kernel TEXT COLLATE "C" NOT NULL DEFAULT '',
	arch TEXT COLLATE "C" NOT NULL DEFAULT '',
	governor TEXT COLLATE "C" NOT NULL DEFAULT '',
	agent_version TEXT COLLATE "C" NOT NULL DEFAULT '',
	server TEXT COLLATE "C" NOT NULL DEFAULT '',
	throttled BOOLEAN NOT NULL DEFAULT false,
	raw BYTEA NOT NULL
);
CREATE INDEX results_device ON results (fleet, device, started);
CREATE INDEX results_started ON results (started);
CREATE INDEX results_command ON results (command_id);
CREATE TABLE runs (
	result_id TEXT COLLATE "C" NOT NULL REFERENCES results (id),
	idx BIGINT NOT NULL,
	started BIGINT NOT NULL,
	duration_s DOUBLE PRECISION NOT NULL,
	completed BIGINT NOT NULL,
	rps DOUBLE PRECISION NOT NULL,
	mean_us DOUBLE PRECISION,
	p50_us DOUBLE PRECISION,
	p99_us DOUBLE PRECISION,
	max_us DOUBLE PRECISION,
	timeouts BIGINT NOT NULL,
	errors BIGINT NOT NULL,
	err_connect BIGINT NOT NULL,
	err_read BIGINT NOT NULL,
	err_write BIGINT NOT NULL,
	err_status BIGINT NOT NULL,
	err_length BIGINT NOT NULL,
	cpu_pct DOUBLE PRECISION,
	cpu_user_pct DOUBLE PRECISION,
	io_kbs DOUBLE PRECISION,
	mem_kb DOUBLE PRECISION,
	cached_kb DOUBLE PRECISION,
	temp_c DOUBLE PRECISION,
	throttled BOOLEAN NOT NULL,
	PRIMARY KEY (result_id, idx)
);
CREATE TABLE result_specs (
	result_id TEXT COLLATE "C" PRIMARY KEY REFERENCES results (id),
	spec TEXT NOT NULL
);
