// Package modules puts the upstream KubeEdge edge modules on the bus, in the
// order and with the arguments upstream edgecore uses, and prepares the
// database they share.
package modules

import (
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/common/dbm"
	"github.com/kubeedge/kubeedge/edge/pkg/devicetwin"
	"github.com/kubeedge/kubeedge/edge/pkg/edged"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub"
	"github.com/kubeedge/kubeedge/edge/pkg/edgestream"
	"github.com/kubeedge/kubeedge/edge/pkg/eventbus"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager"
	"github.com/kubeedge/kubeedge/edge/pkg/servicebus"
	dbtest "github.com/kubeedge/kubeedge/edge/test"
)

// Register registers every edge module with its part of c, then opens the
// database. The database must come last: each module registers its tables
// while it registers itself, and InitDBConfig creates them.
func Register(c *v1alpha2.EdgeCoreConfig) {
	node := c.Modules.Edged.HostnameOverride
	installDMIListener()
	registerUpgrade(c)
	devicetwin.Register(c.Modules.DeviceTwin, node)
	edged.Register(c.Modules.Edged)
	edgehub.Register(c.Modules.EdgeHub, node)
	eventbus.Register(c.Modules.EventBus, node)
	metamanager.Register(c.Modules.MetaManager)
	servicebus.Register(c.Modules.ServiceBus)
	edgestream.Register(c.Modules.EdgeStream, node, c.Modules.Edged.NodeIP)
	dbtest.Register(c.Modules.DBTest)
	dbm.InitDBConfig(c.DataBase.DriverName, c.DataBase.AliasName, c.DataBase.DataSource)
}
