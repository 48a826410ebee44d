package store

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// The schema of each engine is its folder's SQL files, NNNN_name.sql,
// applied in order, each once. Append a file, never edit one: a store
// records how many it has applied (SQLite: PRAGMA user_version;
// PostgreSQL: the schema_migrations table).
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migration is one SQL file of an engine's schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the migrations of engine ("sqlite" or "postgres"),
// numbered from 1 without a gap.
func migrations(engine string) ([]migration, error) {
	dir := path.Join("migrations", engine)
	ents, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var out []migration
	for _, e := range ents { // sorted by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migrations: %s: want NNNN_name.sql", e.Name())
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("migrations: %s is number %d, want %d", e.Name(), v, len(out)+1)
		}
		b, err := fs.ReadFile(migrationFiles, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(e.Name(), ".sql"), sql: string(b)})
	}
	return out, nil
}
