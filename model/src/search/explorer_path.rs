//! Paths in the format of Stateright's Explorer (`init/action/action/...`:
//! the initial state's index, then each step's index among all the
//! state's actions, no-ops included), from the graph's successor positions
//! (which skip the no-ops), and as the Explorer's text.

use stateright::Model;

/// Explorer action indices for a path of successor positions (the unit of
/// [`Graph::path_to`](super::Graph::path_to) and of edges): the initial state's index unchanged,
/// then for each step the index, among all the state's actions, of the
/// action that is that successor. A position past the last successor ends
/// the path there.
pub fn explorer_indices<M>(model: &M, successors: &[u32]) -> Vec<u32>
where
    M: Model,
    M::Action: Clone,
{
    let Some((&init, steps)) = successors.split_first() else {
        return Vec::new();
    };
    let Some(mut state) = model.init_states().into_iter().nth(init as usize) else {
        return Vec::new();
    };
    let mut indices = vec![init];
    let mut actions = Vec::new();
    for &wanted in steps {
        actions.clear();
        model.actions(&state, &mut actions);
        let found = actions
            .iter()
            .enumerate()
            .filter_map(|(index, action)| Some((index, model.next_state(&state, action.clone())?)))
            .nth(wanted as usize);
        let Some((index, next)) = found else {
            break;
        };
        indices.push(index as u32);
        state = next;
    }
    indices
}

/// Explorer's path text for action indices: `0/3/1`.
pub fn encode_path(indices: &[u32]) -> String {
    indices
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("/")
}
