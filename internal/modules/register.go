// Package modules puts the upstream KubeEdge edge modules on the bus, in the
// order and with the arguments upstream edgecore uses, and prepares the
// database they share.
package modules

import (
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/beehive/pkg/core"
	"github.com/kubeedge/kubeedge/edge/pkg/devicetwin"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub"
	"github.com/kubeedge/kubeedge/edge/pkg/edgestream"
	"github.com/kubeedge/kubeedge/edge/pkg/eventbus"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao"
	"github.com/kubeedge/kubeedge/edge/pkg/servicebus"
	"github.com/kubeedge/kubeedge/edge/pkg/taskmanager"
	dbtest "github.com/kubeedge/kubeedge/edge/test"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/nodedb"
)

// migrateDatabase carries a database of the v1.20-based release into
// v1.23's schema (see nodedb.MigrateV120). A failure is logged: the node
// still runs, and its metaserver cache fills again from the cloud.
func migrateDatabase(dataSource string) {
	gdb := dao.GetDB()
	if gdb == nil {
		return
	}
	sqlDB, err := gdb.DB()
	if err == nil {
		var n int64
		n, err = nodedb.MigrateV120(sqlDB)
		if n > 0 {
			klog.InfoS("Carried the database of KubeEdge v1.20 into v1.23's schema", "dataSource", dataSource, "rows", n)
		}
	}
	if err != nil {
		klog.ErrorS(err, "Migrating the database failed", "dataSource", dataSource)
	}
}

// Register puts the kubelet server where only administrators reach it,
// makes every connection to the container runtime check who serves it,
// lets statuses reach the cloud when the database is full,
// opens the database with the tables of the enabled modules, then
// registers every edge module with its part of c (edgeHub with its
// reconnection hooks, which record the connection's state in statusFile
// unless it is ""), the relisting of the node's pods after metamanager,
// and last the Windows
// node job runners, which must replace upstream's: taskmanager.Register
// installs those.
func Register(c *v1alpha2.EdgeCoreConfig, goos string, upgrades *UpgradeAgent, statusFile string) {
	node := c.Modules.Edged.HostnameOverride
	installDMIListener()
	installKubeletServer(config.KubeletServerOf(c, goos))
	installRuntimeCheck()
	installMetaServerListener(c, goos)
	installStoreFailed()
	dao.Init(c.DataBase.DataSource, c.Modules.DeviceTwin, c.Modules.EventBus, c.Modules.MetaManager, c.Modules.ServiceBus)
	migrateDatabase(c.DataBase.DataSource)
	devicetwin.Register(c.Modules.DeviceTwin, node)
	edged.Register(c.Modules.Edged)
	status := newHubStatus(statusFile)
	installHubReconnect(hubOptions{
		heartbeat: time.Duration(c.Modules.EdgeHub.Heartbeat) * time.Second, node: node,
		leaseSeconds: c.Modules.Edged.TailoredKubeletConfig.NodeLeaseDurationSeconds,
		token:        c.Modules.EdgeHub.Token, status: status, certFile: firstConnectionCert(c.Modules.EdgeHub),
	})
	edgehub.Register(c.Modules.EdgeHub, node)
	eventbus.Register(c.Modules.EventBus, node)
	metamanager.Register(c.Modules.MetaManager)
	if c.Modules.Edged.Enable && c.Modules.MetaManager.Enable && c.Modules.EdgeHub.Enable {
		core.Register(&podRelistModule{node: node, status: status})
	}
	servicebus.Register(c.Modules.ServiceBus)
	edgestream.Register(c.Modules.EdgeStream, node, c.Modules.Edged.NodeIP)
	taskmanager.Register(c.Modules.TaskManager)
	dbtest.Register(c.Modules.DBTest)
	upgrades.register()
}
