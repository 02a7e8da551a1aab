//! The network models a run can use, by name (`--model`, `model=`).

/// A network model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Model {
    /// Packets through pipelined virtual cut-through routers, flit-level accurate
    /// (`network::packet`).
    #[default]
    Packet,
    /// Messages as flows sharing links max-min fairly (`network::flow`, the MFS idea).
    Flow,
}

impl Model {
    pub const ALL: [Model; 2] = [Model::Packet, Model::Flow];

    pub fn name(self) -> &'static str {
        match self {
            Model::Packet => "packet",
            Model::Flow => "flow",
        }
    }

    /// The model a name says, or the message that lists the models.
    pub fn parse(name: &str) -> Result<Model, String> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown network model '{name}'{} (expected {})",
                    crate::error::did_you_mean(name, names.iter().copied()),
                    names.join(" or ")
                )
            })
    }
}
