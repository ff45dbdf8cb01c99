// Evaluations: test runs (the list, one run's cases, two runs compared) and datasets with their
// cases, each at its own address under /evaluations.

import { Route, Switch } from "wouter";
import { EmptyState } from "../../ui/page.js";
import { CompareView } from "./compare-view.js";
import { DatasetView } from "./dataset-view.js";
import { DatasetsView } from "./datasets-view.js";
import { RunView } from "./run-view.js";
import { RunsView } from "./runs-view.js";
import "../../ui/field.css";
import "./evaluations.css";

export default function EvaluationsPage() {
  return (
    <Switch>
      <Route path="/" component={RunsView} />
      <Route path="/runs/:runId" component={RunView} />
      <Route path="/compare" component={CompareView} />
      <Route path="/datasets" component={DatasetsView} />
      <Route path="/datasets/:dataset" component={DatasetView} />
      <Route>
        <EmptyState title="No such page">
          This address is not a page of Evaluations: see the test runs or the datasets.
        </EmptyState>
      </Route>
    </Switch>
  );
}
