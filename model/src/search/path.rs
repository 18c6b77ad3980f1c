//! Paths replayed: the states and actions along Explorer action indices
//! (the initial state's index, then each step's index among all the
//! state's actions), Stateright's [`Path`](stateright::Path) of them, and
//! the indices of a Stateright path.

use stateright::Model;

/// Stateright's [`Path`](stateright::Path) along Explorer action indices,
/// for the trace printers.
pub fn path_of<M>(model: &M, indices: &[u32]) -> Option<stateright::Path<M::State, M::Action>>
where
    M: Model,
    M::State: Clone + PartialEq,
    M::Action: Clone + PartialEq,
{
    let steps = replay(model, indices);
    let (init, _) = steps.first()?;
    let actions: Vec<M::Action> = steps.iter().filter_map(|(_, a)| a.clone()).collect();
    stateright::Path::from_actions(model, init.clone(), actions.iter())
}

/// Rebuilds the states and actions along Explorer action indices.
pub fn replay<M>(model: &M, indices: &[u32]) -> Vec<(M::State, Option<M::Action>)>
where
    M: Model,
    M::State: Clone,
    M::Action: Clone,
{
    let mut out = Vec::new();
    let Some((&init, steps)) = indices.split_first() else {
        return out;
    };
    let Some(mut state) = model.init_states().into_iter().nth(init as usize) else {
        return out;
    };
    let mut actions = Vec::new();
    for &index in steps {
        actions.clear();
        model.actions(&state, &mut actions);
        let Some(action) = actions.get(index as usize).cloned() else {
            break;
        };
        let next = model
            .next_state(&state, action.clone())
            .unwrap_or_else(|| state.clone());
        out.push((state, Some(action)));
        state = next;
    }
    out.push((state, None));
    out
}

/// The Explorer action indices of a Stateright path (what `Path::encode`
/// prints), or `None` when a step is not one of the model's actions.
pub fn indices_of<M>(model: &M, path: &stateright::Path<M::State, M::Action>) -> Option<Vec<u32>>
where
    M: Model,
    M::State: Clone + PartialEq,
    M::Action: Clone + PartialEq,
{
    let steps = path.clone().into_vec();
    let (init, _) = steps.first()?;
    let mut indices = vec![model.init_states().iter().position(|s| s == init)? as u32];
    let mut actions = Vec::new();
    for (state, action) in &steps {
        let Some(action) = action else { continue };
        actions.clear();
        model.actions(state, &mut actions);
        indices.push(actions.iter().position(|a| a == action)? as u32);
    }
    Some(indices)
}
