package node

import (
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao"
)

// closeDatabase closes the node's SQLite database after the modules have
// been cleaned up. Upstream opens it (edge/pkg/metamanager/dao) and never
// closes it: the process exit does. A service stop then leaves the last
// writes to SQLite's crash recovery, and the log does not show that the
// stop got that far.
func closeDatabase(db *v1alpha2.DataBase) {
	if db == nil {
		return
	}
	gdb := dao.GetDB()
	if gdb == nil {
		// Not opened (the node stopped before its modules registered).
		return
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		klog.ErrorS(err, "Closing the database failed", "dataSource", db.DataSource)
		return
	}
	if err := sqlDB.Close(); err != nil {
		klog.ErrorS(err, "Closing the database failed", "dataSource", db.DataSource)
		return
	}
	klog.InfoS("Closed the database", "dataSource", db.DataSource)
}
