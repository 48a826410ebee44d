package migrations

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
//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Migration is one SQL file of an engine's schema.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Of reads the migrations of engine ("sqlite" or "postgres"), numbered
// from 1 without a gap.
func Of(engine string) ([]Migration, error) {
	dir := engine
	ents, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var out []Migration
	for _, e := range ents { // sorted by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migrations: %s: want NNNN_name.sql", e.Name())
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("migrations: %s is number %d, want %d", e.Name(), v, len(out)+1)
		}
		b, err := fs.ReadFile(files, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(e.Name(), ".sql"), SQL: string(b)})
	}
	return out, nil
}
