package sqldb

import "encoding/json"

// LabelsJSON is the JSON of a label map as the store keeps it; in
// PostgreSQL, where it is read as jsonb, without NUL (which jsonb refuses
// even escaped).
func (d Dialect) LabelsJSON(m map[string]string) (string, error) {
	m = NonNil(m)
	if d.PG {
		clean := make(map[string]string, len(m))
		for k, v := range m {
			clean[pgText(k)] = pgText(v)
		}
		m = clean
	}
	b, err := json.Marshal(m)
	return string(b), err
}
