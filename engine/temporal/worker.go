package temporal

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Pollers is how many requests a worker keeps open to take calls (and
// the child workflows that make a large step's calls) from its queue, by
// default. A task queue is split into partitions on the server (four by
// default), and a task put in one that no request is waiting on waits to
// be forwarded: with the SDK's default of two, a call of a driven run
// waited up to two seconds now and then.
const Pollers = 8

// NewWorker returns a worker that takes sot's workflows and calls from
// queue and answers the calls with acts. Start it with Run or Start.
func NewWorker(c client.Client, queue string, acts *Activities, opts worker.Options) worker.Worker {
	if opts.MaxConcurrentActivityTaskPollers == 0 && opts.ActivityTaskPollerBehavior == nil {
		opts.MaxConcurrentActivityTaskPollers = Pollers
	}
	if opts.MaxConcurrentWorkflowTaskPollers == 0 && opts.WorkflowTaskPollerBehavior == nil {
		opts.MaxConcurrentWorkflowTaskPollers = Pollers
	}
	w := worker.New(c, queue, opts)
	Register(w, acts)
	return w
}

// Register registers sot's workflows and the call activity on r (a worker, or a
// test environment) under the names clients use.
func Register(r worker.Registry, acts *Activities) {
	r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterWorkflowWithOptions(CallsWorkflow, workflow.RegisterOptions{Name: CallsWorkflowName})
	RegisterDriveWorkflow(r)
	r.RegisterActivityWithOptions(acts.Call, activityOptions())
}

// DriveQueue is the task queue on which the workers of queue take the
// runs they drive: a queue of its own, so that the runs a worker drives,
// which wait on calls for as long as they last, never take every slot
// the calls themselves need.
func DriveQueue(queue string) string { return queue + "-drive" }

// RegisterDriveWorkflow registers the workflow that drives a whole run on
// a worker (DriveWorkflow) on r, beside sot's other workflow.
func RegisterDriveWorkflow(r worker.Registry) {
	r.RegisterWorkflowWithOptions(DriveWorkflow, workflow.RegisterOptions{Name: DriveWorkflowName})
}

// NewDriveWorker returns a worker that takes from DriveQueue(queue) the
// runs the workflows of queue give it to drive, and drives them with d;
// opts.MaxConcurrentActivityExecutionSize bounds how many at once.
func NewDriveWorker(c client.Client, queue string, d *Driver, opts worker.Options) worker.Worker {
	w := worker.New(c, DriveQueue(queue), opts)
	w.RegisterActivityWithOptions(d.Drive, activity.RegisterOptions{Name: ActivityDrive})
	return w
}

// activityOptions register the call activity under the name the workflow
// schedules.
func activityOptions() activity.RegisterOptions { return activity.RegisterOptions{Name: ActivityCall} }
