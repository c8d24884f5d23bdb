package nodedb

import (
	"database/sql"
	"path/filepath"
	"testing"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao/models"
)

// The tables as the release built from KubeEdge v1.20 created them: beego's
// ORM DDL for metamanager's dao.Meta and dao/v2.MetaV2.
const v120Schema = `
CREATE TABLE "meta" ("key" varchar(256) NOT NULL PRIMARY KEY, "type" varchar(32) NOT NULL DEFAULT '', "value" text);
CREATE TABLE "meta_v2" ("key" varchar(256) NOT NULL PRIMARY KEY, "groupversionresource" varchar(256) NOT NULL DEFAULT '',
  "namespace" varchar(256) NOT NULL DEFAULT '', "name" varchar(256) NOT NULL DEFAULT '',
  "resourceversion" integer unsigned NOT NULL DEFAULT 0, "value" text);
INSERT INTO meta VALUES ('default/node/win-1', 'node', '{"metadata":{"name":"win-1"}}');
INSERT INTO meta_v2 VALUES ('/core/v1/pods/default/app-1', 'core/v1/pods', 'default', 'app-1', 42, '{"kind":"Pod"}');
`

// A node upgraded from the v1.20-based release opens its database with
// upstream v1.23's gorm layer (AutoMigrate, as dao.Init does); what it
// kept must read the same afterwards, through v1.23's models.
func TestMigrateV120Database(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edgecore.db")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(v120Schema); err != nil {
		t.Fatal(err)
	}
	db, err := gorm.Open(sqlite.Open(path), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&models.Meta{}, &models.MetaV2{}); err != nil {
		t.Fatalf("v1.23's migration of a v1.20 database: %v", err)
	}
	// Without the carry-over, v1.23 sees the cached pod with no resource.
	var before models.MetaV2
	if err := db.First(&before, "key = ?", "/core/v1/pods/default/app-1").Error; err != nil {
		t.Fatal(err)
	}
	if before.GroupVersionResource != "" {
		t.Fatalf("gorm filled group_version_resource itself (%q): the carry-over is no longer needed", before.GroupVersionResource)
	}

	n, err := MigrateV120(raw)
	if err != nil || n != 1 {
		t.Fatalf("MigrateV120 = %d, %v; want 1 row carried over", n, err)
	}
	var after models.MetaV2
	if err := db.First(&after, "key = ?", "/core/v1/pods/default/app-1").Error; err != nil {
		t.Fatal(err)
	}
	if after.GroupVersionResource != "core/v1/pods" || after.ResourceVersion != 42 || after.Name != "app-1" || after.Value != `{"kind":"Pod"}` {
		t.Fatalf("the v1.20 row reads %+v after the migration", after)
	}
	var node models.Meta
	if err := db.First(&node, "key = ?", "default/node/win-1").Error; err != nil || node.Type != "node" {
		t.Fatalf("the v1.20 meta row reads %+v, %v", node, err)
	}
	// Idempotent: a second start carries nothing again and keeps the
	// values v1.23 wrote since.
	if err := db.Model(&models.MetaV2{}).Where("key = ?", after.Key).Update("resource_version", 43).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := MigrateV120(raw); err != nil || n != 0 {
		t.Fatalf("second MigrateV120 = %d, %v; want nothing to do", n, err)
	}
	if err := db.First(&after, "key = ?", after.Key).Error; err != nil || after.ResourceVersion != 43 {
		t.Fatalf("a second migration overwrote v1.23's write: %+v, %v", after, err)
	}
	// A database v1.23 created has no old columns.
	fresh, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if n, err := MigrateV120(fresh); err != nil || n != 0 {
		t.Fatalf("MigrateV120 on an empty database = %d, %v", n, err)
	}
}
