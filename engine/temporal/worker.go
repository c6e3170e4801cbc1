package temporal

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// NewWorker returns a worker that takes sot's workflows and calls from
// queue and answers the calls with acts. Start it with Run or Start.
func NewWorker(c client.Client, queue string, acts *Activities, opts worker.Options) worker.Worker {
	w := worker.New(c, queue, opts)
	Register(w, acts)
	return w
}

// Register registers sot's workflow and activity on r (a worker, or a
// test environment) under the names clients use.
func Register(r worker.Registry, acts *Activities) {
	r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(acts.Call, activityOptions())
}

// RegisterDriver registers the workflow and activity that drive a whole
// run on a worker (DriveWorkflow), with d running its commands.
func RegisterDriver(r worker.Registry, d *Driver) {
	r.RegisterWorkflowWithOptions(DriveWorkflow, workflow.RegisterOptions{Name: DriveWorkflowName})
	r.RegisterActivityWithOptions(d.Drive, activity.RegisterOptions{Name: ActivityDrive})
}

// activityOptions register the call activity under the name the workflow
// schedules.
func activityOptions() activity.RegisterOptions { return activity.RegisterOptions{Name: ActivityCall} }
