package nodedb

import (
	"database/sql"
	"fmt"
	"strings"
)

// MigrateV120 carries what the database of a node that ran KubeEdge v1.20
// keeps into the schema of v1.23. v1.20 wrote it with beego's ORM, v1.23
// with gorm: the table meta_v2 (the metaserver's cache of the objects edge
// applications list and watch) has its two compound names split since,
// groupversionresource -> group_version_resource and resourceversion ->
// resource_version. gorm's migration adds the new columns and leaves the old
// ones, so rows written before the upgrade would read as having no
// resource and version. It must run after the node opened its database
// (dao.Init, which adds the columns); it copies the old values where the
// new ones are empty, leaves the old columns for a rollback to the previous
// release, and returns how many rows it carried over. A database without
// the old columns (a new node, or one migrated before) is left alone.
func MigrateV120(db *sql.DB) (int64, error) {
	cols, err := columns(db, "meta_v2")
	if err != nil || cols == nil {
		return 0, err
	}
	if !cols["groupversionresource"] || !cols["group_version_resource"] {
		return 0, nil
	}
	set := []string{"group_version_resource = groupversionresource"}
	if cols["resourceversion"] && cols["resource_version"] {
		set = append(set, "resource_version = resourceversion")
	}
	res, err := db.Exec(`UPDATE meta_v2 SET ` + strings.Join(set, ", ") +
		` WHERE (group_version_resource IS NULL OR group_version_resource = '') AND groupversionresource <> ''`)
	if err != nil {
		return 0, fmt.Errorf("carry meta_v2 rows of KubeEdge v1.20 into the v1.23 columns: %w", err)
	}
	return res.RowsAffected()
}

// columns returns the columns of table, nil when there is no such table.
func columns(db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols map[string]bool
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if cols == nil {
			cols = map[string]bool{}
		}
		cols[strings.ToLower(name)] = true
	}
	return cols, rows.Err()
}
